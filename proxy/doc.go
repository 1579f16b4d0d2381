// Package proxy is `hermes proxy`: a reverse proxy with one path prefix per
// route that records the gateway metric contract while it passes replies
// through. A request to /NAME/REST goes to route NAME's upstream URL with
// REST appended; each route is gateway/instrument's Middleware around an
// httputil.ReverseProxy, so the proxy judges replies exactly as
// instrument does (there is no second recorder).
//
//	cfg, err := proxy.Load("proxy.yaml")
//	p, err := proxy.New(cfg, reg, logger)
//	http.Handle("/", p)
//
// It never changes a reply: method, path, query, headers and bodies pass
// both ways, streamed (each write flushed), with Host set to the
// upstream's. It adds no credentials and no X-Forwarded-For; the caller's
// Authorization passes untouched and is never logged. An upstream that
// gives no reply is answered 504 (a timeout) or 502, as nginx would, and
// recorded as timeout or conn_error; a caller that hangs up cancels the
// upstream call and is not recorded, and so does one that stops sending
// its request body for client_body_timeout (answered 408). Retries and
// fallback stay the gateway's job.
package proxy
