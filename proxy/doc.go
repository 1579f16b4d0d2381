// Package proxy is `hermes proxy`: a reverse proxy with one path prefix per
// route that records the gateway metric contract while it passes replies
// through. A request to /NAME/REST goes to route NAME's upstream URL with
// REST appended; each judged reply is fed to gateway/validate as it passes
// and recorded through gateway/instrument's recording core (Metrics.Begin
// and its Call, which instrument's Middleware and Transport record
// through), so the proxy judges replies exactly as instrument does (there
// is no second recorder).
//
//	cfg, err := proxy.Load("proxy.yaml")
//	p, err := proxy.New(cfg, reg, logger)
//	srv := p.Server(mux) // a Front; mux serves /metrics and the rest
//	err = srv.Serve(listener)
//
// The front (serve.go) is, on Linux, a set of event loops, one a P
// (loop_linux.go): each passes a route's plain HTTP/1.1 calls to an
// http:// upstream (a body of at most 4 KiB, no Expect or Upgrade, not
// HEAD) on its own thread, both connections in one epoll set, the reply
// read only as fast as the caller takes it, as nginx's workers pass them.
// Any other connection (another path, a TLS upstream, a larger or
// streamed body) is handed with what was read of it to fasthttp's server
// (front.go), which serves it from then on; elsewhere than Linux that
// server serves every connection. There, a route whose upstream needs
// nothing but an HTTP/1.1 connection (no proxy URL, no credentials,
// headers or TLS files for prometheus/common to build, no HTTP/2 for an
// https:// upstream) passes a request with a body of at most 4 KiB
// through the lean exchange: fasthttp's header types over the route's own
// connection pool (h1.go). Every other route, and a request body streamed
// or larger, goes through the route's RoundTripper: net/http's Transport
// or prometheus/common's round trippers.
//
// It never changes a reply: method, path, query, headers and bodies pass
// both ways, streamed (a stream's events flushed as they arrive), with
// Host set to the upstream's. It adds no credentials and no
// X-Forwarded-For; the caller's Authorization passes untouched and is
// never logged. An upstream that gives no reply is answered 504 (a
// timeout) or 502, as nginx would, and recorded as timeout or conn_error;
// a caller that hangs up cancels the upstream call and is not recorded,
// and so does one that stops sending its request body for
// client_body_timeout (answered 408). Retries and fallback stay the
// gateway's job.
package proxy
