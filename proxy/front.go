package proxy

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"github.com/hermes-failover/hermes/gateway/instrument"
)

// Server is the server hermes proxy listens with: its event loops for a
// route's plain calls (Front), and fasthttp's server for every other
// connection, serving every route under /NAME/ itself and every other
// path (/metrics, /-/…, /debug/pprof/) through other, a net/http handler,
// by fasthttpadaptor.
//
// Why fasthttp and not net/http's server: under make bench-proxy a bare
// reverse proxy on net/http's server and transport cost 72–110 µs of CPU
// a plain reply against nginx's 12–17, and hermes proxy on it 45–68;
// on fasthttp's server and client the same bare proxy cost 16–21 µs and
// reached 89–104 % of nginx's rate (docs/scale.md, "A fasthttp floor").
// The 80 % budget leaves the proxy about 30 µs a plain reply.
//
// A route's request is read as nginx reads it: the headers, then up to
// 8 KiB of a body of declared length before the route is served
// (fasthttp's pre-read, held to the route's client_body_timeout), the
// rest streamed. Header names keep the case they were sent in; the reply
// gets no Server, Date or Content-Type of the proxy's own.
func (p *Proxy) Server(other http.Handler) *Front {
	slow := p.fasthttpServer(other)
	return &Front{slow: slow, loops: newLoops(p, slow)}
}

// fasthttpServer is the fasthttp server of Server.
func (p *Proxy) fasthttpServer(other http.Handler) *fasthttp.Server {
	adapted := fasthttpadaptor.NewFastHTTPHandler(other)
	return &fasthttp.Server{
		Handler: func(ctx *fasthttp.RequestCtx) {
			if rt, rest, ok := p.routeOf(ctx.URI().PathOriginal()); ok {
				p.serveRoute(ctx, rt, rest)
				return
			}
			adapted(ctx)
		},
		HeaderReceived:    p.headerReceived,
		ErrorHandler:      p.requestError,
		StreamRequestBody: true,
		// The longest request head taken, answered 431 beyond: nginx's
		// large_client_header_buffers takes a header line of up to 8 KiB.
		// fasthttp's default, 4 KiB, refused a 6 KB header that nginx and
		// the net/http front passed; each connection holds this buffer,
		// so it is not nginx's 32 KiB in all (docs/proxy.md).
		ReadBufferSize:                8 << 10,
		DisableHeaderNamesNormalizing: true,
		DisablePreParseMultipartForm:  true,
		NoDefaultServerHeader:         true,
		NoDefaultDate:                 true,
		NoDefaultContentType:          true,
		// A caller's request headers, as nginx's client_header_timeout;
		// a route's body then gets its client_body_timeout.
		ReadTimeout: DefaultLimits.ClientBodyTimeout,
		// nginx's keepalive_timeout.
		IdleTimeout:     75 * time.Second,
		CloseOnShutdown: true,
		Logger:          fasthttpLogger{p.logger},
	}
}

// fasthttpLogger writes fasthttp's own messages (a connection it could
// not serve) at debug level: a caller's mistakes are not the proxy's.
type fasthttpLogger struct {
	l interface{ Debug(string, ...any) }
}

func (l fasthttpLogger) Printf(format string, args ...any) {
	l.l.Debug("http server", "msg", fmt.Sprintf(format, args...))
}

// routeOf finds the route a raw path starts with, and the rest of the
// path after /NAME.
func (p *Proxy) routeOf(path []byte) (*route, []byte, bool) {
	if len(path) < 2 || path[0] != '/' {
		return nil, nil, false
	}
	name, rest := path[1:], []byte(nil)
	if i := bytes.IndexByte(name, '/'); i >= 0 {
		name, rest = name[:i], name[i:]
	}
	rt := p.routes.Load().byName[string(name)]
	return rt, rest, rt != nil
}

// headerReceived sets how fasthttp reads a route's request body before
// the handler: one byte of it, held to the route's client_body_timeout,
// then the handler streams the rest, each read held to that timeout
// (clientBody), so that a caller who stalls within it is answered 408
// and counted as the route's (fasthttp reads up to 8 KiB ahead
// otherwise, and a timeout there reaches requestError with the request
// already reset). A chat request of a few hundred bytes has arrived with
// its headers, and is then read from the server's buffer.
func (p *Proxy) headerReceived(h *fasthttp.RequestHeader) fasthttp.RequestConfig {
	if h.ContentLength() == 0 {
		return fasthttp.RequestConfig{}
	}
	uri := h.RequestURI()
	if i := bytes.IndexByte(uri, '?'); i >= 0 {
		uri = uri[:i]
	}
	if rt, _, ok := p.routeOf(uri); ok {
		return fasthttp.RequestConfig{ReadTimeout: rt.clientBodyTimeout, MaxRequestBodySize: 1}
	}
	return fasthttp.RequestConfig{}
}

// requestError answers a request fasthttp could not read, as its
// default handler does (a caller who sent a route's headers and none of
// its body within client_body_timeout gets its 408 here, uncounted: the
// request is reset by then).
func (p *Proxy) requestError(ctx *fasthttp.RequestCtx, err error) {
	var ne net.Error
	var small *fasthttp.ErrSmallBuffer
	switch {
	case errors.As(err, &ne) && ne.Timeout():
		ctx.Error("Request timeout", fasthttp.StatusRequestTimeout)
	case errors.As(err, &small):
		ctx.Error("Too big request header", fasthttp.StatusRequestHeaderFieldsTooLarge)
	default:
		ctx.Error("Error when parsing request", fasthttp.StatusBadRequest)
	}
}

func (p *Proxy) bodyTimedOut(ctx *fasthttp.RequestCtx, route string) {
	p.logger.Debug("caller stopped sending the request body", "route", route)
	ctx.Response.Reset()
	ctx.SetConnectionClose()
	ctx.SetStatusCode(fasthttp.StatusRequestTimeout)
	ctx.SetContentType("application/json")
	fmt.Fprintf(ctx, `{"error":{"message":"hermes proxy: the request body of route %s stopped arriving (client_body_timeout)","type":"invalid_request_error","code":"request_timeout"}}`+"\n", route)
}

// serveRoute passes one request of route rt to its upstream and the
// reply back, recording it when it is judged. The reply's body is
// written by the server after serveRoute returns (a body stream): the
// route's slot, the upstream call and the recording end with it
// (replyBody.CloseWithError).
func (p *Proxy) serveRoute(ctx *fasthttp.RequestCtx, rt *route, rest []byte) {
	select {
	case rt.slots <- struct{}{}:
	default:
		// Refused before any upstream call: not recorded, counted apart.
		p.busy.WithLabelValues(rt.name).Inc()
		ctx.Error("hermes proxy: too many concurrent requests on route "+rt.name, fasthttp.StatusServiceUnavailable)
		return
	}
	streaming := false
	defer func() {
		if !streaming {
			<-rt.slots
		}
	}()
	var call *instrument.Call
	if rt.judges(ctx) {
		call = p.metrics.Begin(rt.name, rt.v)
		call.DiscardContent() // the proxy reads the verdict alone
	}
	b := &replyBody{call: call, cancel: func(error) {}, slots: rt.slots}
	// The caller, for the call's limits to look at while it waits on
	// the upstream (the lean exchange's deadlines, the RoundTripper
	// path's clock).
	b.who.conn = ctx.Conn()
	b.caller = &b.who
	var length int
	var ok bool
	if rt.lean != nil && leanRequest(ctx) {
		length, ok = p.exchangeLean(ctx, rt, rest, b)
	} else {
		// The route's RoundTripper holds the call to its limits
		// (limited), which finds the caller on the request's context.
		cctx := context.WithValue(context.Background(), callerKey{}, b.caller)
		length, ok = p.exchangeRoundTrip(ctx, rt, rest, cctx, b)
	}
	if !ok {
		return
	}
	streaming = true
	if length == noBody || ctx.IsHead() {
		ctx.Response.SkipBody = true
		b.CloseWithError(nil)
		return
	}
	// The headers wait for the body when some of it is already here, and
	// leave with it in one write; otherwise they go at once, as nginx
	// sends them, and each piece of the body follows as it arrives (a
	// chunked body is flushed chunk by chunk by fasthttp; one of declared
	// length, once the headers are out, goes straight to the socket).
	ctx.Response.ImmediateHeaderFlush = !bodyReady(b.rc)
	ctx.Response.SetBodyStream(b, length)
}

// noBody is the length of a reply without a body (HEAD, 204, 304).
const noBody = -3

// exchangeRoundTrip makes the upstream call through the route's
// RoundTripper (net/http's Transport, or prometheus/common's round
// trippers), for a route or a request the lean exchange does not take:
// it sets the reply's status and headers on ctx and b's body, and
// returns the body's length (-1: unknown, sent on chunked), or false
// when the call got no reply (answered by failed).
func (p *Proxy) exchangeRoundTrip(ctx *fasthttp.RequestCtx, rt *route, rest []byte, cctx context.Context, b *replyBody) (int, bool) {
	cctx, cancel := context.WithCancelCause(cctx)
	b.cancel = cancel
	req := rt.outRequest(ctx, rest, cctx)
	if req.ContentLength != 0 && !ctx.IsGet() && !ctx.IsHead() {
		b.cb = p.callerBody(ctx, rt, cancel, b.call)
		req.Body = b.cb
	} else {
		req.ContentLength = 0
	}
	resp, err := rt.transport.RoundTrip(req)
	if err != nil {
		cancel(nil)
		b.cb.wait()
		p.failed(ctx, rt, b.call, b.cb, b.caller, err)
		return 0, false
	}
	h := &ctx.Response.Header
	h.SetStatusCode(resp.StatusCode)
	copyReplyHeader(h, resp.Header)
	if b.call != nil {
		b.call.Reply(resp.StatusCode, resp.Header)
	}
	b.rc = resp.Body
	if ctx.IsHead() || resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified {
		// No body; a HEAD's length is the one a GET would get.
		if resp.ContentLength > 0 {
			h.SetContentLength(int(resp.ContentLength))
		}
		return noBody, true
	}
	return int(resp.ContentLength), true
}

// callerBody is the caller's request body, each read held to the
// route's client_body_timeout.
func (p *Proxy) callerBody(ctx *fasthttp.RequestCtx, rt *route, cancel context.CancelCauseFunc, call *instrument.Call) *clientBody {
	return &clientBody{rc: io.NopCloser(ctx.RequestBodyStream()), ctl: ctx.Conn(), timeout: rt.clientBodyTimeout,
		cancel: cancel, counter: p.stalled, route: rt.name, now: time.Now, closed: make(chan struct{}), call: call}
}

// failed answers an upstream call that got no reply: 408 to a caller
// that stopped sending its body (counted by clientBody, not recorded),
// nothing to one that hung up (not recorded), and otherwise 504 for a
// timeout and 502 for anything else, as nginx answers, recorded with
// its code.
func (p *Proxy) failed(ctx *fasthttp.RequestCtx, rt *route, call *instrument.Call, cb *clientBody, who *caller, err error) {
	switch {
	case cb != nil && cb.timedOut.Load():
		p.bodyTimedOut(ctx, rt.name)
		return
	case who.gone.Load():
		p.logger.Debug("caller hung up before the reply", "route", rt.name)
		ctx.SetConnectionClose()
		return
	}
	code := instrument.FailureCode(err)
	if call != nil {
		call.Fail(code)
	}
	status := fasthttp.StatusBadGateway
	if code == instrument.CodeTimeout {
		status = fasthttp.StatusGatewayTimeout
	}
	p.logger.Warn("upstream call failed", "route", rt.name, "code", code, "err", redact(err))
	ctx.Response.Reset()
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	fmt.Fprintf(ctx, `{"error":{"message":"hermes proxy: the upstream of route %s gave no reply (%s)","type":"upstream_error","code":%q}}`+"\n", rt.name, code, code)
}

// judges says whether the request is one whose reply is judged and
// recorded: a POST to one of the route's judged paths, not a probe's.
func (rt *route) judges(ctx *fasthttp.RequestCtx) bool {
	if !ctx.IsPost() || len(ctx.Request.Header.Peek(instrument.ProbeHeader)) > 0 {
		return false
	}
	path := ctx.Path()
	for _, s := range rt.judgedPaths {
		if bytes.HasSuffix(path, s) {
			return true
		}
	}
	return false
}

// outRequest is the request to the upstream: the caller's method, its
// path after /NAME joined to the upstream's, its query and headers as
// sent (hop-by-hop ones dropped, as httputil.ReverseProxy and nginx drop
// them; X-Forwarded-* and Forwarded kept, none added), Host the
// upstream's, as nginx's proxy_pass sets it.
func (rt *route) outRequest(ctx *fasthttp.RequestCtx, rest []byte, cctx context.Context) *http.Request {
	u := *rt.up
	if len(rest) == 0 {
		// /NAME is the upstream's base itself, as nginx maps it.
	} else {
		raw := strings.TrimSuffix(rt.up.EscapedPath(), "/") + string(rest)
		if p, err := url.PathUnescape(raw); err == nil {
			u.Path, u.RawPath = p, raw
		} else {
			u.Path, u.RawPath = raw, ""
		}
	}
	u.RawQuery = string(ctx.URI().QueryString())
	in := &ctx.Request.Header
	var connection []string
	if c := in.Peek("Connection"); len(c) > 0 {
		connection = strings.Split(string(c), ",")
	}
	h := make(http.Header, 8)
	in.VisitAll(func(k, v []byte) {
		key := textproto.CanonicalMIMEHeaderKey(string(k))
		if hopByHop[key] && !(key == "Te" && string(v) == "trailers") {
			return
		}
		for _, c := range connection {
			if strings.EqualFold(strings.TrimSpace(c), key) {
				return
			}
		}
		h[key] = append(h[key], string(v))
	})
	if _, ok := h["User-Agent"]; !ok {
		// Go's own User-Agent is not added, as ReverseProxy does not.
		h["User-Agent"] = []string{""}
	}
	req := (&http.Request{
		Method:        string(ctx.Method()),
		URL:           &u,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        h,
		Host:          u.Host,
		ContentLength: int64(in.ContentLength()),
		Body:          http.NoBody,
	}).WithContext(cctx)
	if req.ContentLength < 0 {
		req.ContentLength = -1 // chunked: streamed on chunked
	}
	return req
}

// hopByHop are the headers that belong to one connection
// (httputil.ReverseProxy's list, with Host and Content-Length, which the
// request sets on its own).
var hopByHop = map[string]bool{
	"Connection": true, "Proxy-Connection": true, "Keep-Alive": true, "Proxy-Authenticate": true,
	"Proxy-Authorization": true, "Te": true, "Trailer": true, "Transfer-Encoding": true, "Upgrade": true,
	"Host": true, "Content-Length": true,
}

// copyReplyHeader sets the upstream's reply headers on the caller's
// reply, hop-by-hop ones dropped; the body stream sets the framing.
func copyReplyHeader(dst *fasthttp.ResponseHeader, src http.Header) {
	var connection []string
	for _, c := range src["Connection"] {
		connection = append(connection, strings.Split(c, ",")...)
	}
	for k, vs := range src {
		if hopByHop[k] {
			continue
		}
		listed := false
		for _, c := range connection {
			listed = listed || strings.EqualFold(strings.TrimSpace(c), k)
		}
		if listed {
			continue
		}
		for _, v := range vs {
			dst.Add(k, v)
		}
	}
}

// readyBody is a reply body that can tell whether what comes next of it
// is already read from the upstream (h1Body).
type readyBody interface{ ready() bool }

func bodyReady(rc io.ReadCloser) bool {
	r, ok := rc.(readyBody)
	return ok && r.ready()
}

// replyBody is the upstream's reply body as the caller's reply's body
// stream: fasthttp reads it and writes each read to the caller (a
// chunked body flushed at every read). Each read is fed to the call's
// recording; the end (CloseWithError, with the error of the write, if
// any) records the reply, unless its caller hung up or stalled, and
// frees the route's slot.
//
// It holds, by value, what a call needs for as long as its reply lives
// (its caller, and on the lean exchange the caller's body and the
// call's deadlines): one allocation where there were five.
type replyBody struct {
	rc     io.ReadCloser
	call   *instrument.Call // nil: not judged
	caller *caller
	cancel context.CancelCauseFunc
	cb     *clientBody
	slots  chan struct{}
	broken bool // a read from the upstream failed
	once   sync.Once

	who    caller     // what caller points to
	body   clientBody // on the lean exchange, what cb points to
	limits deadlines  // the lean exchange's
}

func (b *replyBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 && b.call != nil {
		b.call.Write(p[:n])
	}
	if err != nil && err != io.EOF {
		b.broken = true
	}
	return n, err
}

// ready passes the upstream body's readiness on.
func (b *replyBody) ready() bool { return bodyReady(b.rc) }

// Close is called by fasthttp before CloseWithError, which does the work.
func (b *replyBody) Close() error { return nil }

// CloseWithError ends the reply: wErr is the error that ended writing it
// (the upstream's read or the write to the caller), nil when it was
// written whole.
func (b *replyBody) CloseWithError(wErr error) error {
	b.once.Do(func() {
		_ = b.rc.Close()
		switch {
		case b.call == nil:
		case b.caller.gone.Load(), b.cb != nil && b.cb.timedOut.Load():
			// The caller went away or stalled: the upstream did nothing
			// wrong.
		case wErr != nil && !b.broken:
			// The write to the caller failed: it hung up.
		default:
			if b.broken {
				b.call.Interrupted()
			}
			b.call.Finish(false)
		}
		b.cancel(nil)
		// The transport may still be sending the caller's body from its
		// own goroutine; the server reads the connection again once this
		// returns.
		b.cb.wait()
		<-b.slots
	})
	return nil
}

// lean is what the lean exchange needs of a route whose upstream takes
// it: an HTTP/1.1 connection and nothing prometheus/common builds around
// one (see upstreamTransport; h1Transport's pool).
type lean struct {
	t        *h1Transport
	key      connKey
	hostname string
	host     []byte // the Host header: the upstream's
	base     []byte // the upstream URL's path, escaped, without its last /
	root     []byte // the upstream URL's path, escaped, for /NAME itself
	limits   Limits
}

func newLean(t *h1Transport, up *url.URL, l Limits) *lean {
	if up.Scheme != "http" && !(up.Scheme == "https" && t.https) {
		return nil
	}
	key := connKey{scheme: up.Scheme, addr: up.Host}
	if up.Port() == "" {
		port := "80"
		if up.Scheme == "https" {
			port = "443"
		}
		key.addr = net.JoinHostPort(up.Hostname(), port)
	}
	root := up.EscapedPath()
	if root == "" {
		root = "/"
	}
	return &lean{t: t, key: key, hostname: up.Hostname(), host: []byte(up.Host),
		base: []byte(strings.TrimSuffix(up.EscapedPath(), "/")), root: []byte(root), limits: l}
}

// leanRequest says whether the lean exchange takes the request: a body
// of declared length up to maxReadAhead (read whole, then sent with the
// headers in one write), no Upgrade or Expect. Any other goes through
// the route's RoundTripper, which streams a body while it reads the
// reply.
func leanRequest(ctx *fasthttp.RequestCtx) bool {
	h := &ctx.Request.Header
	n := h.ContentLength()
	// -2: no length and not chunked, a GET's or a HEAD's: no body.
	return (n == -2 || n >= 0 && n <= maxReadAhead) && len(h.Peek("Upgrade")) == 0 && len(h.Peek("Expect")) == 0
}

// heads are the request and reply headers of lean exchanges.
var heads = sync.Pool{New: func() any { return &leanHeads{} }}

type leanHeads struct {
	req  fasthttp.RequestHeader
	resp fasthttp.ResponseHeader
	uri  []byte
	body []byte // the caller's request body, read whole
}

// maxPooledRequestBody is the largest request body buffer kept in the
// pool of leanHeads; a larger one is left to the collector.
const maxPooledRequestBody = 64 << 10

// exchangeLean is exchangeRoundTrip through the route's own HTTP/1.1
// connection pool, on fasthttp's header types: the caller's request
// header copied (case kept), its URI rewritten and Host set, hop-by-hop
// headers dropped, written with its body in one write; the reply's
// header parsed by fasthttp from the connection's reader and copied to
// the caller's reply; its body read by h1Body. No http.Request, no
// http.Header: under make bench-proxy a plain reply cost (docs/scale.md,
// the fifth pass).
func (p *Proxy) exchangeLean(ctx *fasthttp.RequestCtx, rt *route, rest []byte, b *replyBody) (int, bool) {
	l := rt.lean
	in := &ctx.Request.Header
	hs := heads.Get().(*leanHeads)
	defer func() {
		hs.req.Reset()
		hs.resp.Reset()
		if cap(hs.body) > maxPooledRequestBody {
			hs.body = nil
		}
		heads.Put(hs)
	}()
	var body []byte
	if n := in.ContentLength(); n > 0 {
		// Read whole before the call, under the read deadline that
		// headerReceived set at the end of the headers (the route's
		// client_body_timeout for these few KiB); no deadline per read,
		// and nothing reads the body once it is read. It is kept in
		// hs, which goes back to the pool when the exchange returns:
		// the body is written (and written again on a retry) within it.
		b.body = clientBody{rc: io.NopCloser(ctx.RequestBodyStream()), perReadOff: true, cancel: func(error) {},
			counter: p.stalled, route: rt.name, call: b.call}
		b.cb = &b.body
		body = slices.Grow(hs.body[:0], n)[:n]
		hs.body = body
		_, err := io.ReadFull(b.cb, body)
		if err != nil {
			if !b.cb.timedOut.Load() {
				// The caller went away in the middle of its body.
				p.logger.Debug("caller hung up before its request body ended", "route", rt.name)
				ctx.SetConnectionClose()
				return 0, false
			}
			p.bodyTimedOut(ctx, rt.name)
			return 0, false
		}
	}
	out := &hs.req
	hs.uri = l.outRequest(out, in, rest, ctx.URI().QueryString(), hs.uri)
	b.limits.begin(l.limits, b.caller)
	hb, err := l.t.do(context.Background(), &b.limits, l.key, l.hostname, out.Header(), body, ctx.IsHead(), leanReplayable(ctx), &hs.resp)
	if err != nil {
		p.failed(ctx, rt, b.call, b.cb, b.caller, err)
		return 0, false
	}
	// Header by header, not CopyTo, which would take the parsed header's
	// defaults too (a Date of the proxy's own in place of the upstream's).
	h := &ctx.Response.Header
	h.SetStatusCode(hs.resp.StatusCode())
	h.SetStatusMessage(hs.resp.StatusMessage())
	hs.resp.VisitAll(func(k, v []byte) {
		if !leanReplyHopByHop(k) {
			h.AddBytesKV(k, v)
		}
	})
	if b.call != nil {
		b.call.ReplyEncoded(hs.resp.StatusCode(), string(hs.resp.ContentType()), string(hs.resp.ContentEncoding()))
	}
	b.rc = hb
	switch n := hs.resp.ContentLength(); {
	case hb.length == 0 && n != 0:
		if n > 0 {
			h.SetContentLength(n) // a HEAD's: the length a GET would get
		}
		return noBody, true
	case n == -2:
		return -1, true // to the upstream's end: chunked to the caller
	default:
		return n, true
	}
}

// outRequest sets out to the upstream's request for in, whose path after
// /NAME is rest and whose query is query: in's headers copied (case
// kept), its URI rewritten and Host set, hop-by-hop headers dropped. uri
// is a buffer for the URI, returned grown.
func (l *lean) outRequest(out, in *fasthttp.RequestHeader, rest, query, uri []byte) []byte {
	in.CopyTo(out)
	uri = append(uri[:0], l.base...)
	if len(rest) == 0 {
		uri = append(uri[:0], l.root...)
	} else {
		uri = append(uri, rest...)
	}
	if len(query) > 0 {
		uri = append(append(uri, '?'), query...)
	}
	out.SetRequestURIBytes(uri)
	out.SetHostBytes(l.host)
	out.SetNoDefaultContentType(true) // fasthttp's application/octet-stream
	out.ResetConnectionClose()
	for _, k := range leanHopByHop {
		out.Del(k)
	}
	if te := out.Peek("Te"); len(te) > 0 && string(te) != "trailers" {
		out.Del("Te")
	}
	return uri
}

// leanHopByHop are the hop-by-hop headers dropped both ways on the lean
// path (Connection: close, Content-Length and Transfer-Encoding are
// fasthttp's own fields, set by it).
var leanHopByHop = []string{"Keep-Alive", "Proxy-Connection", "Proxy-Authenticate", "Proxy-Authorization", "Trailer", "Upgrade", "Connection"}

// leanReplyHopByHop says whether a reply header is one the lean path
// does not pass on: the hop-by-hop ones, and the framing, which the body
// stream sets.
func leanReplyHopByHop(k []byte) bool {
	for _, h := range leanHopByHop {
		if bytes.EqualFold(k, []byte(h)) {
			return true
		}
	}
	return bytes.EqualFold(k, []byte("Content-Length")) || bytes.EqualFold(k, []byte("Transfer-Encoding"))
}

// leanReplayable is replayable for the caller's request: its body, if
// any, is in memory.
func leanReplayable(ctx *fasthttp.RequestCtx) bool {
	switch string(ctx.Method()) {
	case http.MethodGet, http.MethodHead, http.MethodOptions, http.MethodTrace:
		return true
	}
	h := &ctx.Request.Header
	return len(h.Peek("Idempotency-Key")) > 0 || len(h.Peek("X-Idempotency-Key")) > 0
}
