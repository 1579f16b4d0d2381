package promapi

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
)

// BenchmarkTickAnswer measures one signal's answer at 10,000 routes with
// its evidence (20,000 series, as the shipped policy's counted signals
// answer), from a local server into an Answer: through client_golang's
// model.Vector (Client.Query, what ticks used) and streamed
// (Client.QueryRoutes, what they use); decode is the streamed decoding
// alone, from memory. B/op is the garbage a tick makes per signal.
func BenchmarkTickAnswer(b *testing.B) {
	const n = 10000
	var body strings.Builder
	body.WriteString(`{"status":"success","data":{"resultType":"vector","result":[`)
	routes := make([]string, n)
	for i := range routes {
		routes[i] = fmt.Sprintf("provider-%d/model-%d", i/4, i%4)
	}
	positions := newRoutePositions(routes)
	for p, part := range []string{rules.PartValue, rules.PartEvidence} {
		for i, r := range routes {
			if p+i > 0 {
				body.WriteByte(',')
			}
			fmt.Fprintf(&body, `{"metric":{"route":%q,"signal_part":%q},"value":[1700000000.123,"%d"]}`, r, part, 1200*p)
		}
	}
	body.WriteString(`]}}`)
	answer := []byte(body.String())
	b.Run("decode", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(len(answer)))
		for b.Loop() {
			a := newAnswer(positions, true, nil)
			if _, err := decodeAnswer(bytes.NewReader(answer), 0, a.addBytes); err != nil {
				b.Fatal(err)
			}
		}
	})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(answer)
	}))
	defer srv.Close()
	cfg := config.PrometheusConfig{URL: srv.URL}
	client, err := New(cfg, 10*time.Second, nil)
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		query RouteQueryFunc
	}{
		{"vector", VectorRoutes(client.Query)},
		{"streamed", client.QueryRoutes},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(answer)))
			for b.Loop() {
				a := newAnswer(positions, true, nil)
				if err := c.query(context.Background(), "q", time.Unix(1_700_000_000, 0), a); err != nil {
					b.Fatal(err)
				}
				if s := a.sample(n - 1); !s.Counted || s.Volume != 1200 {
					b.Fatalf("last route %+v", s)
				}
			}
		})
	}
}
