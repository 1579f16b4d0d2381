package benchproxy_test

import (
	"bytes"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/internal/benchproxy"
	"github.com/hermes-failover/hermes/proxy"
)

// BenchmarkHandler is the per-request cost of hermes proxy's handler
// (instrument's Middleware, the validator, the limits) over a bare
// httputil.ReverseProxy, both called in process against the same
// benchproxy upstream on 127.0.0.1: the difference of the two is the
// proxy's own work. A stream is 20 events sent back to back.
//
//	go test ./internal/benchproxy -run '^$' -bench Handler -benchmem
func BenchmarkHandler(b *testing.B) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	srv := &http.Server{Handler: &benchproxy.Upstream{Events: 20}, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	b.Cleanup(func() { _ = srv.Close() })
	up := "http://" + l.Addr().String()

	cfg, err := proxy.Parse([]byte("routes:\n  - name: bench\n    upstream: "+up+"\n"), "bench.yaml")
	if err != nil {
		b.Fatal(err)
	}
	hermes, err := proxy.New(cfg, prometheus.NewRegistry(), slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	target, err := url.Parse(up)
	if err != nil {
		b.Fatal(err)
	}
	bare := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.URL.Path = pr.In.URL.Path[len("/bench"):]
		},
		Transport:     &http.Transport{MaxIdleConnsPerHost: 1000},
		FlushInterval: -1,
	}
	for _, h := range []struct {
		name    string
		handler http.Handler
	}{{"reverseproxy", bare}, {"hermes", hermes}} {
		for _, stream := range []bool{false, true} {
			body, want := benchproxy.PlainRequest, len(benchproxy.PlainReply)
			kind := "plain"
			if stream {
				body, want, kind = benchproxy.StreamRequest, 0, "stream"
			}
			b.Run(h.name+"/"+kind, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					req := httptest.NewRequest(http.MethodPost, "/bench/v1/chat/completions", bytes.NewReader(body))
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set(benchproxy.HeaderGap, "0s")
					rec := httptest.NewRecorder()
					h.handler.ServeHTTP(rec, req)
					if rec.Code != http.StatusOK || (want > 0 && rec.Body.Len() != want) || (want == 0 && !bytes.HasSuffix(rec.Body.Bytes(), []byte("data: [DONE]\n\n"))) {
						b.Fatalf("status %d, %d bytes: %s", rec.Code, rec.Body.Len(), strconv.Quote(rec.Body.String()[:min(rec.Body.Len(), 200)]))
					}
				}
			})
		}
	}
}
