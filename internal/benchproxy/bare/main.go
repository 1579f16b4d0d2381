// Command bare is the floor hermes proxy is measured against in
// scripts/bench-proxy.sh's throughput rounds: a bare
// httputil.ReverseProxy from -listen to -upstream, the transport keeping
// 1,000 idle connections per host, full duplex, and nothing else: no
// judging, no metrics, no limits. What hermes proxy costs beyond it is its own; what
// it costs beyond nginx is Go's net/http.
package main

import (
	"flag"
	"io"
	"log"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"time"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:19483", "address to serve on")
	upstream := flag.String("upstream", "http://127.0.0.1:19480", "the upstream's base URL")
	prefix := flag.String("prefix", "/bench", "path prefix removed before the upstream's")
	flag.Parse()
	up, err := url.Parse(*upstream)
	if err != nil {
		log.Fatal(err)
	}
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(up)
			pr.Out.URL.Path = strings.TrimPrefix(pr.In.URL.Path, *prefix)
			pr.Out.URL.RawPath = ""
		},
		Transport: &http.Transport{MaxIdleConns: 20000, MaxIdleConnsPerHost: 1000, DisableCompression: true, IdleConnTimeout: 5 * time.Minute},
		ErrorLog:  log.New(io.Discard, "", 0),
	}
	// Full duplex, as hermes proxy needs it too (proxy.Proxy.ServeHTTP
	// says why): without it a stream answered before the transport has
	// read the request body's end is cut.
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_ = http.NewResponseController(w).EnableFullDuplex()
		rp.ServeHTTP(w, r)
	})
	srv := &http.Server{Addr: *listen, Handler: h, ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(srv.ListenAndServe())
}
