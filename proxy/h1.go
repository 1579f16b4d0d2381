package proxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"
)

// h1Transport is the upstream client of a route whose http_config asks
// for nothing but an HTTP/1.1 connection (no proxy, no credentials,
// headers or TLS files prometheus/common must build, no HTTP/2 for an
// https:// upstream): a pool of idle keep-alive connections per host and
// the exchange of the fasthttp front's lean path (do), on the calling
// goroutine. next is the http.Transport built from the same settings,
// which the route's RoundTripper path uses for what the lean path does
// not take (a request body streamed or of unknown length, Upgrade,
// Expect).
//
// Why hand-rolled: net/http's Transport writes each request from a
// writeLoop goroutine and reads each reply in a readLoop goroutine, both
// per connection, handing the request and the reply to them over
// channels, and works on http.Request and http.Header, which the
// fasthttp front would have to build for every request; fasthttp's
// HostClient hands a chunked body over one chunk per read, so that a
// stream's events that arrive together leave one write and one flush
// each (its judged stream cost 110–166 µs of CPU where hermes proxy on
// net/http cost 92–151, docs/scale.md). Here the request is fasthttp's
// RequestHeader, written with its body in one write; the reply's header
// is parsed by fasthttp's ResponseHeader from the connection's own
// bufio.Reader; the body is read through Go's chunked reader
// (net/http/httputil), which returns every chunk already buffered in
// one read. What is left to this file is the pool and the connection's
// life: it is put back when its reply was read to the end and both sides
// keep it alive, and closed otherwise; the front's exchange is held to
// its limits by the connection's deadlines (deadline.go), and one held by
// a context instead has the connection closed when the context is done,
// which ends a blocked write or read; a kept connection is looked at
// (alive) before it is used, and
// one the upstream closed under a request that may be sent again is
// retried once, as net/http's Transport does. Measured in the fifth pass
// of docs/scale.md.
type h1Transport struct {
	next        *http.Transport
	https       bool        // https:// upstreams take this path too
	tlsConfig   *tls.Config // of next
	maxIdle     int         // idle connections kept per host
	idleTimeout time.Duration
	dialer      net.Dialer

	mu    sync.Mutex
	idle  map[connKey][]*h1Conn // per host, the most recently used last
	sweep *time.Timer           // closes connections idle past idleTimeout
}

// newH1Transport is the pool beside next, whose Proxy must be nil. https
// says whether https:// upstreams take it (when HTTP/2 is not asked).
func newH1Transport(next *http.Transport, https bool) *h1Transport {
	return &h1Transport{next: next, https: https, tlsConfig: next.TLSClientConfig,
		maxIdle: next.MaxIdleConnsPerHost, idleTimeout: next.IdleConnTimeout,
		idle: map[connKey][]*h1Conn{}}
}

type connKey struct{ scheme, addr string }

// h1Conn is one upstream connection.
type h1Conn struct {
	conn    net.Conn  // TCP, or TLS over it
	tcp     net.Conn  // the TCP connection
	live    *liveness // the TCP connection's liveness check
	key     connKey
	br      *bufio.Reader
	state   *tls.ConnectionState
	written int64 // bytes written in the current exchange
	idleAt  time.Time
	// dl holds the lean exchange under way to its limits (nil: none, or
	// one held by its context); deadlined says the connection has
	// deadlines set, which an exchange by context lifts.
	dl        *deadlines
	deadlined bool
}

// Write writes to the connection; a write of a lean exchange that meets
// its deadline ends with the limit it ran into.
func (c *h1Conn) Write(p []byte) (int, error) {
	n, err := c.conn.Write(p)
	c.written += int64(n)
	if err != nil && c.dl != nil && isDeadline(err) {
		err = c.dl.writeCause()
	}
	return n, err
}

// Read reads from the connection (its bufio.Reader reads through it). A
// read of a lean exchange that meets the read deadline looks at the
// call's limits and its caller (deadlines.expired): it ends with the
// cause when there is one, and otherwise waits again under the next
// deadline.
func (c *h1Conn) Read(p []byte) (int, error) {
	d := c.dl
	if d == nil {
		return c.conn.Read(p)
	}
	for {
		n, err := c.conn.Read(p)
		if n > 0 {
			d.noted()
			if err != nil && isDeadline(err) {
				err = nil // the next read looks
			}
			return n, err
		}
		if err == nil || !isDeadline(err) {
			return n, err
		}
		if err := d.expired(); err != nil {
			return 0, err
		}
		if err := c.conn.SetReadDeadline(d.read); err != nil {
			return 0, err
		}
	}
}

// maxOneXX is how many 1xx replies may precede the reply (net/http's
// figure).
const maxOneXX = 5

// get returns an idle connection to key that is still open, or a new
// one (dialled under d's limits when d is not nil, under ctx's
// otherwise); reused says which.
func (t *h1Transport) get(ctx context.Context, d *deadlines, key connKey, host string) (*h1Conn, bool, error) {
	for {
		t.mu.Lock()
		conns := t.idle[key]
		if len(conns) == 0 {
			t.mu.Unlock()
			break
		}
		c := conns[len(conns)-1]
		conns[len(conns)-1] = nil
		t.idle[key] = conns[:len(conns)-1]
		t.mu.Unlock()
		if time.Since(c.idleAt) < t.idleTimeout && c.br.Buffered() == 0 && c.live.alive() {
			return c, true, nil
		}
		c.conn.Close()
	}
	if d != nil {
		c, err := d.dial(t, key, host)
		return c, false, err
	}
	c, err := t.dial(ctx, key, host)
	return c, false, err
}

func (t *h1Transport) dial(ctx context.Context, key connKey, host string) (*h1Conn, error) {
	conn, err := t.dialer.DialContext(ctx, "tcp", key.addr)
	if err != nil {
		return nil, err
	}
	c := &h1Conn{conn: conn, tcp: conn, live: newLiveness(conn), key: key}
	if key.scheme == "https" {
		cfg := t.tlsConfig.Clone()
		if cfg == nil {
			cfg = &tls.Config{}
		}
		if cfg.ServerName == "" {
			cfg.ServerName = host
		}
		cfg.NextProtos = []string{"http/1.1"}
		tc := tls.Client(conn, cfg)
		hctx, cancel := context.WithTimeout(ctx, t.next.TLSHandshakeTimeout)
		err := tc.HandshakeContext(hctx)
		cancel()
		if err != nil {
			conn.Close()
			return nil, err
		}
		state := tc.ConnectionState()
		c.conn, c.state = tc, &state
	}
	// The buffer bounds a reply's headers (fasthttp's ResponseHeader.Read
	// parses them whole from it; longer ones are a 502): 8 KiB, the upper
	// of nginx's proxy_buffer_size defaults, so that a provider's long
	// rate-limit and cookie headers pass rather than read as its failure.
	c.br = bufio.NewReaderSize(c, 8<<10)
	return c, nil
}

// writers are the buffers requests are written through, a page each,
// shared: a connection needs one only while it sends a request, not while
// it waits for or reads the reply (an open stream).
var writers = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, 4<<10) }}

// put keeps c for the next request to its host, or closes it when its
// host has maxIdle idle already.
func (t *h1Transport) put(c *h1Conn) {
	c.dl = nil
	c.idleAt = time.Now()
	t.mu.Lock()
	conns := t.idle[c.key]
	if len(conns) >= t.maxIdle {
		t.mu.Unlock()
		c.conn.Close()
		return
	}
	t.idle[c.key] = append(conns, c)
	if t.sweep == nil {
		t.sweep = time.AfterFunc(t.idleTimeout, t.closeExpired)
	}
	t.mu.Unlock()
}

// closeExpired closes the connections idle for idleTimeout, and comes
// back while any are left.
func (t *h1Transport) closeExpired() {
	var old []*h1Conn
	t.mu.Lock()
	for k, conns := range t.idle {
		i := 0
		for i < len(conns) && time.Since(conns[i].idleAt) >= t.idleTimeout {
			i++
		}
		old = append(old, conns[:i]...)
		if i == len(conns) {
			delete(t.idle, k)
		} else {
			t.idle[k] = append(conns[:0:0], conns[i:]...)
		}
	}
	t.sweep = nil
	if len(t.idle) > 0 {
		t.sweep = time.AfterFunc(t.idleTimeout, t.closeExpired)
	}
	t.mu.Unlock()
	for _, c := range old {
		c.conn.Close()
	}
}

// CloseIdleConnections closes the idle connections of the pool and of
// next.
func (t *h1Transport) CloseIdleConnections() {
	t.mu.Lock()
	idle := t.idle
	t.idle = map[connKey][]*h1Conn{}
	if t.sweep != nil {
		t.sweep.Stop()
		t.sweep = nil
	}
	t.mu.Unlock()
	for _, conns := range idle {
		for _, c := range conns {
			c.conn.Close()
		}
	}
	t.next.CloseIdleConnections()
}

// idleCount is the number of idle connections kept for key.
func (t *h1Transport) idleCount(key connKey) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.idle[key])
}

var errBodyClosed = errors.New("http: read on closed response body")

// h1Body is a reply's body: its connection goes back to the pool when
// the body was read to its end and both sides keep it alive, and is
// closed otherwise (a body closed before its end is not drained, as
// net/http's Transport does not).
type h1Body struct {
	// rc is a chunked body's reader over c.br; nil for a body of
	// declared length or to the connection's end, read from c.br here
	// (no LimitReader and NopCloser to allocate for each reply).
	rc   io.Reader
	t    *h1Transport
	c    *h1Conn
	ctx  context.Context
	stop stopper // what closes c when the call is cancelled
	keep bool
	// length is the body's declared length (-1: chunked or to the end),
	// read how much of it was read.
	length, read int64
	// state is 0 while open, 1 once read to the end, 2 once closed
	// before.
	state atomic.Int32
}

func (b *h1Body) Read(p []byte) (int, error) {
	switch b.state.Load() {
	case 1:
		return 0, io.EOF
	case 2:
		return 0, errBodyClosed
	}
	var n int
	var err error
	switch {
	case b.rc != nil:
		n, err = b.rc.Read(p)
	case b.length < 0:
		n, err = b.c.br.Read(p)
	case b.read >= b.length:
		err = io.EOF
	default:
		if left := b.length - b.read; int64(len(p)) > left {
			p = p[:left]
		}
		n, err = b.c.br.Read(p)
	}
	b.read += int64(n)
	if err == io.EOF && b.length > b.read {
		// The connection ended before the declared length.
		err = io.ErrUnexpectedEOF
	}
	if err == io.EOF {
		b.finish(true)
	} else if err != nil {
		if b.ctx.Err() != nil {
			err = b.ctx.Err()
		} else if d := b.c.dl; d != nil && d.cause != nil {
			err = d.cause // as it came, whatever the chunked reader made of it
		}
		b.finish(false)
	}
	return n, err
}

// ready says whether the rest of a body of declared length, or the next
// piece of another, has already arrived (it is in the connection's
// buffer).
func (b *h1Body) ready() bool {
	if b.state.Load() != 0 {
		return true
	}
	if b.length >= 0 {
		return int64(b.c.br.Buffered()) >= b.length-b.read
	}
	return b.c.br.Buffered() > 0
}

func (b *h1Body) Close() error {
	b.finish(false)
	return nil
}

// finish ends the body once: its connection is pooled when read says it
// was read to its end, it may be kept and the context did not close it.
func (b *h1Body) finish(read bool) {
	state := int32(2)
	if read {
		state = 1
	}
	if !b.state.CompareAndSwap(0, state) {
		return
	}
	if b.stop.stop() && read && b.keep {
		b.t.put(b.c)
		return
	}
	b.c.conn.Close()
}

// do is the exchange of the fasthttp front (front.go's lean path): head
// is the request's line and headers as fasthttp's RequestHeader writes
// them, body its whole body (nil for none), sent in one write; the
// reply's headers are parsed into hdr by fasthttp's ResponseHeader from
// the connection's own reader, and the body is read here: of declared
// length, chunked (through Go's chunked reader, which returns every
// chunk already buffered in one read, so that events that arrive
// together leave together), or to the connection's end. head says the
// request was a HEAD (its reply has no body); replayable that it may be
// sent again on a fresh connection when a kept one turns out closed
// before it answered. 1xx replies are read past, as nginx drops them.
//
// d, when not nil, holds the call to its limits through the
// connection's deadlines (the front's way; ctx is then not watched);
// without it a context.AfterFunc on ctx closes the connection in use
// when ctx is done.
func (t *h1Transport) do(ctx context.Context, d *deadlines, key connKey, host string, head, body []byte, isHead, replayable bool, hdr *fasthttp.ResponseHeader) (*h1Body, error) {
	for retried := false; ; retried = true {
		c, reused, err := t.get(ctx, d, key, host)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, err
		}
		b, retry, err := t.exchange(ctx, d, c, head, body, isHead, reused, replayable, hdr)
		if err == nil {
			return b, nil
		}
		if !retry || retried {
			return nil, err
		}
	}
}

// exchange writes a request on c and reads its reply's headers into
// hdr; retry says c was a kept connection (reused) the upstream had
// closed before it read anything of the request, or before it answered
// one that may be sent again (replayable).
func (t *h1Transport) exchange(ctx context.Context, d *deadlines, c *h1Conn, head, body []byte, isHead, reused, replayable bool, hdr *fasthttp.ResponseHeader) (*h1Body, bool, error) {
	var stop stopper = unwatched{}
	if d != nil {
		c.dl, c.deadlined = d, true
		if err := d.arm(c.conn); err != nil {
			c.dl = nil
			c.conn.Close()
			return nil, false, fmt.Errorf("setting the upstream connection's deadlines: %w", err)
		}
	} else {
		if c.deadlined {
			// Left by a lean exchange: this one is held by ctx.
			c.deadlined = false
			if err := c.conn.SetDeadline(time.Time{}); err != nil {
				c.conn.Close()
				return nil, false, fmt.Errorf("lifting the upstream connection's deadlines: %w", err)
			}
		}
		stop = stopFunc(context.AfterFunc(ctx, func() { c.conn.Close() }))
	}
	fail := func(retry bool, err error) (*h1Body, bool, error) {
		stop.stop()
		c.dl = nil
		c.conn.Close()
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		if d != nil && d.cause != nil {
			// A limit or the caller's hang-up, whatever fasthttp's
			// header parser made of it; not a closed connection to try
			// again.
			return nil, false, d.cause
		}
		return nil, retry, err
	}
	c.written = 0
	bw := writers.Get().(*bufio.Writer)
	bw.Reset(c)
	_, err := bw.Write(head)
	if err == nil && len(body) > 0 {
		_, err = bw.Write(body)
	}
	if err == nil {
		err = bw.Flush()
	}
	bw.Reset(nil)
	writers.Put(bw)
	if err != nil {
		return fail(reused && c.written == 0, fmt.Errorf("writing the request upstream: %w", err))
	}
	if _, err := c.br.Peek(1); err != nil {
		return fail(reused && replayable, fmt.Errorf("reading the upstream's reply: %w", err))
	}
	for n := 0; ; n++ {
		hdr.DisableNormalizing()
		hdr.SetNoDefaultContentType(true)
		if err := hdr.Read(c.br); err != nil {
			return fail(false, fmt.Errorf("reading the upstream's reply: %w", err))
		}
		status := hdr.StatusCode()
		if status >= 200 {
			break
		}
		if status == http.StatusSwitchingProtocols {
			return fail(false, errors.New("the upstream switched protocols on a request that asked for no upgrade"))
		}
		if n == maxOneXX {
			return fail(false, errors.New("the upstream sent too many 1xx replies"))
		}
		hdr.Reset()
	}
	if d != nil {
		if err := d.replied(c.conn); err != nil {
			return fail(false, fmt.Errorf("setting the upstream connection's deadlines: %w", err))
		}
	}
	keep := hdr.IsHTTP11() && !hdr.ConnectionClose()
	b := &h1Body{t: t, c: c, ctx: ctx, stop: stop, keep: keep, length: -1}
	status := hdr.StatusCode()
	switch n := hdr.ContentLength(); {
	case isHead || status == http.StatusNoContent || status == http.StatusNotModified:
		b.length = 0
		b.finish(true)
		return b, false, nil
	case n >= 0:
		b.length = int64(n)
		if n == 0 {
			b.finish(true)
		}
	case n == -1:
		b.rc = &chunkedBody{r: httputil.NewChunkedReader(c.br), br: c.br}
	default:
		// To the connection's end.
		b.keep = false
	}
	return b, false, nil
}

// chunkedBody is a chunked reply body: Go's chunked reader, and the
// trailer section after its last chunk read past (the reader stops at
// the last chunk's line), so that the connection can carry the next
// reply.
type chunkedBody struct {
	r  io.Reader
	br *bufio.Reader
}

func (b *chunkedBody) Read(p []byte) (int, error) {
	n, err := b.r.Read(p)
	if err == io.EOF {
		for {
			line, lerr := b.br.ReadSlice('\n')
			if lerr != nil {
				return n, io.ErrUnexpectedEOF
			}
			if len(bytes.TrimRight(line, "\r\n")) == 0 {
				break
			}
		}
	}
	return n, err
}

func (b *chunkedBody) Close() error { return nil }

// stopper stops what closes a call's connection when the call is
// cancelled, and says whether it was stopped before it did:
// context.AfterFunc's stop as a stopFunc, or unwatched for a call held
// by its deadlines. An interface, not a func, so that the lean exchange's
// costs no func value (an allocation) per call.
type stopper interface{ stop() bool }

// stopFunc is context.AfterFunc's stop as a stopper.
type stopFunc func() bool

func (f stopFunc) stop() bool { return f() }

// unwatched is the stopper of a call nothing closes from outside (a lean
// exchange: its deadlines end it on its own goroutine).
type unwatched struct{}

func (unwatched) stop() bool { return true }
