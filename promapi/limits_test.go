package promapi

import (
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

// vectorOf answers an instant query with n series of one route each,
// every label value padded to pad bytes.
func vectorOf(n, pad int) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		var b strings.Builder
		b.WriteString(`{"status":"success","data":{"resultType":"vector","result":[`)
		for i := range n {
			if i > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, `{"metric":{"route":"r%d","pad":"%s"},"value":[1000,"1"]}`, i, strings.Repeat("x", pad))
		}
		b.WriteString(`]}}`)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(b.String()))
	}
}

func TestAnswerBounds(t *testing.T) {
	cases := []struct {
		name      string
		series    int
		pad       int
		maxBytes  int64
		maxSeries int
		reason    string // "" when the answer is within the bounds
	}{
		{"within both", 100, 10, 1 << 20, 1000, ""},
		{"unbounded", 20000, 100, 0, 0, ""},
		{"too large", 2000, 1000, 1 << 20, 0, "response_too_large"},
		{"too many series", 2001, 0, 0, 2000, "too_many_series"},
		{"the shipped defaults hold a 10,000-route answer", 10000, 20, config.DefaultMaxResponseBytes, config.DefaultMaxSeriesPerQuery, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			srv := httptest.NewServer(vectorOf(c.series, c.pad))
			defer srv.Close()
			cfg := config.PrometheusConfig{URL: srv.URL, MaxResponseBytes: c.maxBytes, MaxSeriesPerQuery: c.maxSeries}
			client, err := New(cfg, 4*time.Second, nil)
			if err != nil {
				t.Fatal(err)
			}
			routes := make([]string, c.series)
			for i := range routes {
				routes[i] = fmt.Sprintf("r%d", i)
			}
			for name, query := range map[string]QueryFunc{
				"vector": client.Query,
				"routes": byRoute(client.QueryRoutes, routes...),
			} {
				vec, err := query(context.Background(), "up", time.Unix(1000, 0))
				if c.reason == "" {
					if err != nil || len(vec) != c.series {
						t.Fatalf("%s: got %d series, err %v; want %d series", name, len(vec), err, c.series)
					}
					continue
				}
				if got := ErrorReason(err); got != c.reason {
					t.Fatalf("%s: reason %q (err %v), want %q", name, got, err, c.reason)
				}
			}
		})
	}
}

// A failing answer fails its signal for every route, with the reason.
func TestCollectReportsBounds(t *testing.T) {
	srv := httptest.NewServer(vectorOf(50, 0))
	defer srv.Close()
	client, err := New(config.PrometheusConfig{URL: srv.URL, MaxSeriesPerQuery: 10}, 4*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	snap := new(Collector).Collect(context.Background(), client.QueryRoutes, []rules.SignalConfig{{Name: "s", Query: "up"}}, []string{"r1", "r2"}, time.Unix(1000, 0), time.Second)
	for _, r := range []string{"r1", "r2"} {
		if smp := snap.Get(r, "s"); smp.Reason != "too_many_series" {
			t.Errorf("%s: %+v, want the signal in error with reason too_many_series", r, smp)
		}
	}
}
