package benchproxy_test

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/internal/benchproxy"
	"github.com/hermes-failover/hermes/proxy"
)

// BenchmarkHandler is the per-request cost of hermes proxy's front (its
// fasthttp server, the validator, the recording, the limits) beside a
// bare httputil.ReverseProxy on net/http's server, each served on
// 127.0.0.1 in process and called by the same net/http client against
// the same benchproxy upstream: the client's and the upstream's costs are
// in both. A stream is 20 events sent back to back.
//
//	go test ./internal/benchproxy -run '^$' -bench Handler -benchmem
func BenchmarkHandler(b *testing.B) {
	up := listen(b, func(l net.Listener) func() {
		srv := &http.Server{Handler: &benchproxy.Upstream{Events: 20}, ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(l) }()
		return func() { _ = srv.Close() }
	})

	cfg, err := proxy.Parse([]byte("routes:\n  - name: bench\n    upstream: "+up+"\n"), "bench.yaml")
	if err != nil {
		b.Fatal(err)
	}
	hermes, err := proxy.New(cfg, prometheus.NewRegistry(), slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	viaHermes := listen(b, func(l net.Listener) func() {
		srv := hermes.Server(http.HandlerFunc(proxy.NoRoute))
		go func() { _ = srv.Serve(l) }()
		return func() { _ = srv.Shutdown() }
	})
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
	viaBare := listen(b, func(l net.Listener) func() {
		srv := &http.Server{Handler: bare, ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(l) }()
		return func() { _ = srv.Close() }
	})
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
	for _, h := range []struct{ name, base string }{{"reverseproxy", viaBare}, {"hermes", viaHermes}} {
		for _, stream := range []bool{false, true} {
			body, want := benchproxy.PlainRequest, len(benchproxy.PlainReply)
			kind := "plain"
			if stream {
				body, want, kind = benchproxy.StreamRequest, 0, "stream"
			}
			b.Run(h.name+"/"+kind, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					req, err := http.NewRequest(http.MethodPost, h.base+"/bench/v1/chat/completions", bytes.NewReader(body))
					if err != nil {
						b.Fatal(err)
					}
					req.Header.Set("Content-Type", "application/json")
					req.Header.Set(benchproxy.HeaderGap, "0s")
					resp, err := client.Do(req)
					if err != nil {
						b.Fatal(err)
					}
					got, err := io.ReadAll(resp.Body)
					resp.Body.Close()
					if err != nil || resp.StatusCode != http.StatusOK || (want > 0 && len(got) != want) || (want == 0 && !bytes.HasSuffix(got, []byte("data: [DONE]\n\n"))) {
						b.Fatalf("status %d, %d bytes, %v: %s", resp.StatusCode, len(got), err, strconv.Quote(string(got[:min(len(got), 200)])))
					}
				}
			})
		}
	}
}

// listen serves on a port of 127.0.0.1 with serve, which returns how to
// stop, until the benchmark ends, and returns the base URL.
func listen(b *testing.B, serve func(net.Listener) (stop func())) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(serve(l))
	return "http://" + l.Addr().String()
}
