// Command barefast is the second floor hermes proxy is measured against
// in scripts/bench-proxy.sh's throughput rounds: a bare reverse proxy on
// github.com/valyala/fasthttp from -listen to -upstream, the way
// internal/benchproxy/bare is one on net/http. Its fasthttp.HostClient
// keeps its upstream connections alive; both bodies are streamed (the
// server's StreamRequestBody, the client's StreamResponseBody), a body
// of unknown length goes out chunked with one flush per read (fasthttp's
// writeBodyChunked), so SSE events pass as the upstream sends them, and
// header names keep their case on both sides. Nothing else: no judging,
// no metrics, no limits. It tells whether a faster HTTP/1.1 server and
// client than net/http's would bring hermes proxy near nginx.
package main

import (
	"bytes"
	"errors"
	"flag"
	"io"
	"log"
	"net/url"
	"time"

	"github.com/valyala/fasthttp"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:19484", "address to serve on")
	upstream := flag.String("upstream", "http://127.0.0.1:19480", "the upstream's base URL")
	prefix := flag.String("prefix", "/bench", "path prefix removed before the upstream's")
	flag.Parse()
	up, err := url.Parse(*upstream)
	if err != nil {
		log.Fatal(err)
	}
	hc := &fasthttp.HostClient{
		Addr:                          up.Host,
		IsTLS:                         up.Scheme == "https",
		MaxConns:                      20000,
		MaxIdleConnDuration:           5 * time.Minute,
		StreamResponseBody:            true,
		DisableHeaderNamesNormalizing: true,
		DisablePathNormalizing:        true,
		NoDefaultUserAgentHeader:      true,
	}
	p := &proxy{hc: hc, prefix: []byte(*prefix), base: []byte(up.Path), host: up.Host}
	srv := &fasthttp.Server{
		Handler:                       p.serve,
		StreamRequestBody:             true,
		DisableHeaderNamesNormalizing: true,
		DisablePreParseMultipartForm:  true,
		NoDefaultServerHeader:         true,
		NoDefaultDate:                 true,
		NoDefaultContentType:          true,
		ReadTimeout:                   10 * time.Minute,
		Logger:                        log.New(io.Discard, "", 0),
	}
	log.Fatal(srv.ListenAndServe(*listen))
}

type proxy struct {
	hc     *fasthttp.HostClient
	prefix []byte
	base   []byte
	host   string
}

func (p *proxy) serve(ctx *fasthttp.RequestCtx) {
	req := fasthttp.AcquireRequest()
	defer fasthttp.ReleaseRequest(req)
	ctx.Request.Header.CopyTo(&req.Header)
	req.Header.ResetConnectionClose()
	// The request line's URI (path and query as the caller wrote them),
	// the prefix taken off and the upstream's base path put on.
	uri := bytes.TrimPrefix(ctx.Request.Header.RequestURI(), p.prefix)
	req.Header.SetRequestURIBytes(append(append([]byte(nil), p.base...), uri...))
	req.Header.SetHost(p.host)
	if n := ctx.Request.Header.ContentLength(); n != 0 {
		req.SetBodyStream(ctx.RequestBodyStream(), n)
	}
	resp := fasthttp.AcquireResponse()
	if err := p.hc.Do(req, resp); err != nil {
		fasthttp.ReleaseResponse(resp)
		code := fasthttp.StatusBadGateway
		if errors.Is(err, fasthttp.ErrTimeout) {
			code = fasthttp.StatusGatewayTimeout
		}
		ctx.Error(fasthttp.StatusMessage(code), code)
		return
	}
	resp.Header.CopyTo(&ctx.Response.Header)
	ctx.Response.Header.ResetConnectionClose()
	body := resp.BodyStream()
	if body == nil { // no body (HEAD, 204, 304)
		fasthttp.ReleaseResponse(resp)
		return
	}
	// The server writes the body after this handler returns, reading the
	// upstream's stream as it comes, then closes it: closing returns the
	// upstream connection to the pool and the Response to its pool.
	ctx.Response.SetBodyStream(&upstreamBody{r: body, resp: resp}, resp.Header.ContentLength())
}

// upstreamBody is the upstream reply's body stream as the server's
// response body: Close gives the connection and the Response back.
type upstreamBody struct {
	r    io.Reader
	resp *fasthttp.Response
}

func (b *upstreamBody) Read(p []byte) (int, error) { return b.r.Read(p) }

func (b *upstreamBody) Close() error {
	err := b.resp.CloseBodyStream()
	fasthttp.ReleaseResponse(b.resp)
	return err
}
