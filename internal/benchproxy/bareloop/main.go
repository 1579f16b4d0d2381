// Command bareloop is the third floor hermes proxy is measured against
// in scripts/bench-proxy.sh's throughput rounds: a bare reverse proxy on
// an event loop, github.com/panjf2000/gnet/v2 (one epoll loop a core,
// every read and write of a connection done on its loop's thread; the
// upstream connections live on the loop of the caller's connection, so
// a request passes with no goroutine switch and no park), where
// internal/benchproxy/barefast is one on fasthttp (a goroutine a
// connection, each read that finds nothing parking it on Go's netpoller).
// With -judge it also judges and records each reply as hermes proxy
// does, through gateway/instrument with the default validation: what a
// front on an event loop would cost hermes proxy (docs/scale.md, "An
// event loop's floor").
//
// It takes what the bench sends and no more: requests with a body of
// declared length, passed whole once read (up to 1 MiB); replies of
// declared length, chunked (passed as they come, the chunks' data fed to
// the judge) or to the upstream's close; one request at a time on a
// connection. The request line's path loses -prefix; every header
// passes as sent. It is not a proxy to run: nothing bounds what it
// buffers for a slow caller (gnet reads on regardless), it has no
// limits, and errors close the connection.
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"log"
	"net"
	"net/url"
	"strconv"
	"sync"

	"github.com/panjf2000/gnet/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/gateway/instrument"
	"github.com/hermes-failover/hermes/gateway/validate"
	"github.com/hermes-failover/hermes/internal/chunked"
)

func main() {
	listen := flag.String("listen", "127.0.0.1:19485", "address to serve on")
	upstream := flag.String("upstream", "http://127.0.0.1:19480", "the upstream's base URL (http)")
	prefix := flag.String("prefix", "/bench", "path prefix removed before the upstream's")
	judge := flag.Bool("judge", false, "judge and record each reply as hermes proxy does")
	flag.Parse()
	p, err := newProxy(*upstream, *prefix, *judge)
	if err != nil {
		log.Fatal(err)
	}
	log.Fatal(p.serve(*listen))
}

// maxRequest bounds a request held before it is passed on.
const maxRequest = 1 << 20

type proxy struct {
	gnet.BuiltinEventEngine
	addr   net.Addr
	base   []byte // the upstream URL's path
	prefix []byte

	reg     *prometheus.Registry
	metrics *instrument.Metrics // nil: no judging
	v       *validate.Validator

	mu    sync.Mutex
	pools map[gnet.EventLoop]*pool
	ready chan struct{} // closed on boot
}

func newProxy(upstream, prefix string, judge bool) (*proxy, error) {
	u, err := url.Parse(upstream)
	if err != nil || u.Scheme != "http" {
		return nil, errors.New("bareloop: -upstream must be an http:// URL")
	}
	a, err := net.ResolveTCPAddr("tcp", u.Host)
	if err != nil {
		return nil, err
	}
	p := &proxy{addr: a, base: []byte(u.Path), prefix: []byte(prefix), pools: map[gnet.EventLoop]*pool{}, ready: make(chan struct{})}
	if judge {
		p.reg = prometheus.NewRegistry()
		if p.metrics, err = instrument.NewMetrics(p.reg); err != nil {
			return nil, err
		}
		if p.v, err = validate.New(validate.Rules{}); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// serve runs the loops, one a core, until gnet.Stop.
func (p *proxy) serve(listen string) error {
	return gnet.Run(p, "tcp://"+listen, gnet.WithMulticore(true), gnet.WithTCPNoDelay(gnet.TCPNoDelay),
		gnet.WithLogger(quiet{}))
}

// quiet is gnet's logger, its warnings and errors to the standard log
// and nothing else (its default writes its start-up to stdout).
type quiet struct{}

func (quiet) Debugf(string, ...any)     {}
func (quiet) Infof(string, ...any)      {}
func (quiet) Warnf(f string, a ...any)  { log.Printf(f, a...) }
func (quiet) Errorf(f string, a ...any) { log.Printf(f, a...) }
func (quiet) Fatalf(f string, a ...any) { log.Fatalf(f, a...) }

// OnBoot says the loops run.
func (p *proxy) OnBoot(gnet.Engine) gnet.Action {
	close(p.ready)
	return gnet.None
}

// pool is a loop's idle upstream connections, touched on its loop only.
type pool struct{ idle []gnet.Conn }

func (pl *pool) remove(c gnet.Conn) {
	for i, v := range pl.idle {
		if v == c {
			pl.idle = append(pl.idle[:i], pl.idle[i+1:]...)
			return
		}
	}
}

// caller is a caller's connection's state.
type caller struct {
	pool *pool
	ex   *exchange // the open request, nil between requests
}

// exchange is an upstream connection's state: the request it carries
// and how far its reply has passed.
type exchange struct {
	up     gnet.Conn // nil until it opens
	pool   *pool
	caller gnet.Conn        // nil while idle
	send   []byte           // the request, sent when the connection opens
	body   []byte           // the request's body, for the judge
	head   bool             // reading the reply's headers
	left   int              // bytes of the body to pass, or toClose
	chunks *chunked.Scanner // a chunked body's framing, or nil
	call   *instrument.Call
}

const toClose = -1

func (p *proxy) OnOpen(c gnet.Conn) ([]byte, gnet.Action) {
	if ex, ok := c.Context().(*exchange); ok { // a new upstream connection
		ex.up = c
		if ex.caller == nil { // the caller left while it opened
			return nil, gnet.Close
		}
		_, _ = c.Write(ex.send)
		ex.send = nil
		return nil, gnet.None
	}
	p.mu.Lock()
	pl := p.pools[c.EventLoop()]
	if pl == nil {
		pl = &pool{}
		p.pools[c.EventLoop()] = pl
	}
	p.mu.Unlock()
	c.SetContext(&caller{pool: pl})
	return nil, gnet.None
}

var crlf2 = []byte("\r\n\r\n")

func (p *proxy) OnTraffic(c gnet.Conn) gnet.Action {
	switch x := c.Context().(type) {
	case *caller:
		return p.request(c, x)
	case *exchange:
		return p.reply(c, x)
	}
	return gnet.Close
}

// request passes the caller's next request, once it is here whole.
func (p *proxy) request(c gnet.Conn, cl *caller) gnet.Action {
	if cl.ex != nil {
		return gnet.None // one at a time: it waits in the buffer
	}
	buf, _ := c.Peek(-1)
	h := bytes.Index(buf, crlf2)
	if h < 0 {
		if len(buf) > maxRequest {
			return gnet.Close
		}
		return gnet.None
	}
	n, isChunked := framing(buf[:h+2])
	n = max(n, 0)
	if isChunked || h+4+n > maxRequest {
		return gnet.Close
	}
	if len(buf) < h+4+n {
		return gnet.None
	}
	sp := bytes.IndexByte(buf, ' ')
	if sp < 0 || !bytes.HasPrefix(buf[sp+1:], p.prefix) {
		return gnet.Close
	}
	// The request line with the prefix taken off and the base put on,
	// then the rest as sent.
	req := make([]byte, 0, h+4+n+len(p.base))
	req = append(append(append(req, buf[:sp+1]...), p.base...), buf[sp+1+len(p.prefix):h+4+n]...)
	_, _ = c.Discard(h + 4 + n)

	var ex *exchange
	if k := len(cl.pool.idle); k > 0 {
		up := cl.pool.idle[k-1]
		cl.pool.idle = cl.pool.idle[:k-1]
		ex = up.Context().(*exchange)
	} else {
		ex = &exchange{pool: cl.pool}
	}
	ex.caller, ex.head, ex.left, ex.chunks = c, true, 0, nil
	cl.ex = ex
	if p.metrics != nil {
		ex.call = p.metrics.Begin("bench", p.v)
		ex.call.DiscardContent()
		ex.body = req[len(req)-n:]
	}
	if ex.up != nil {
		_, _ = ex.up.Write(req)
		return gnet.None
	}
	ex.send = req
	if _, err := c.EventLoop().Register(gnet.NewContext(context.Background(), ex), p.addr); err != nil {
		return gnet.Close
	}
	return gnet.None
}

// reply passes what came of the upstream's reply to the caller.
func (p *proxy) reply(c gnet.Conn, ex *exchange) gnet.Action {
	if ex.caller == nil {
		return gnet.Close // an idle connection spoke, or the caller left
	}
	buf, _ := c.Peek(-1)
	body := buf
	if ex.head {
		h := bytes.Index(buf, crlf2)
		if h < 0 {
			return gnet.None
		}
		if len(buf) < 12 {
			return gnet.Close
		}
		status, err := strconv.Atoi(string(buf[9:12]))
		if err != nil {
			return gnet.Close
		}
		n, isChunked := framing(buf[:h+2])
		switch {
		case status == 204 || status == 304:
			ex.left = 0
		case isChunked:
			ex.chunks = &chunked.Scanner{}
		case n < 0:
			ex.left = toClose
		default:
			ex.left = n
		}
		ex.head = false
		if ex.call != nil {
			ex.call.ReplyEncoded(status, value(buf[:h+2], "content-type:"), value(buf[:h+2], "content-encoding:"))
			ex.call.Request(ex.body)
		}
		body = buf[h+4:]
	}
	pass, done := len(buf), false
	switch {
	case ex.chunks != nil:
		var j chunked.Judge
		if ex.call != nil {
			j = ex.call
		}
		var used int
		used, done = ex.chunks.Feed(body, j)
		pass = len(buf) - len(body) + used
	case ex.left >= 0:
		m := min(len(body), ex.left)
		if ex.call != nil {
			ex.call.Write(body[:m])
		}
		ex.left -= m
		pass, done = len(buf)-len(body)+m, ex.left == 0
	default:
		if ex.call != nil {
			ex.call.Write(body)
		}
	}
	_, _ = ex.caller.Write(buf[:pass])
	_, _ = c.Discard(pass)
	if done {
		p.finish(ex, false)
		ex.pool.idle = append(ex.pool.idle, c)
	}
	return gnet.None
}

// finish ends ex's request: recorded, and the caller's next request
// served if it is already here.
func (p *proxy) finish(ex *exchange, broken bool) {
	if ex.call != nil {
		if broken {
			ex.call.Interrupted()
		}
		ex.call.Finish(false)
		ex.call, ex.body = nil, nil
	}
	c := ex.caller
	ex.caller = nil
	cl, ok := c.Context().(*caller)
	if !ok {
		return
	}
	cl.ex = nil
	if c.InboundBuffered() > 0 {
		if p.request(c, cl) == gnet.Close {
			_ = c.Close()
		}
	}
}

func (p *proxy) OnClose(c gnet.Conn, _ error) gnet.Action {
	switch x := c.Context().(type) {
	case *exchange:
		x.pool.remove(c)
		if x.caller != nil {
			caller := x.caller
			// A reply to the upstream's close ends here; any other was
			// cut, and so is the caller's connection.
			p.finish(x, x.left != toClose || x.head || x.chunks != nil)
			_ = caller.Close()
		}
	case *caller:
		if x.ex != nil {
			x.ex.caller = nil
			if x.ex.call != nil {
				x.ex.call = nil // the caller hung up: not recorded
			}
			if x.ex.up != nil {
				_ = x.ex.up.Close()
			}
		}
	}
	return gnet.None
}

// framing reads a header block's Content-Length (-1 when there is none)
// and whether it is chunked.
func framing(h []byte) (n int, chunked bool) {
	n = -1
	for len(h) > 0 {
		i := bytes.Index(h, []byte("\r\n"))
		if i < 0 {
			break
		}
		line := h[:i]
		h = h[i+2:]
		if v, ok := cut(line, "content-length:"); ok {
			if m, err := strconv.Atoi(v); err == nil {
				n = m
			}
		} else if v, ok := cut(line, "transfer-encoding:"); ok && v != "identity" {
			chunked = true
		}
	}
	return n, chunked
}

// value is a header's value in the block h, or "".
func value(h []byte, name string) string {
	for len(h) > 0 {
		i := bytes.Index(h, []byte("\r\n"))
		if i < 0 {
			break
		}
		if v, ok := cut(h[:i], name); ok {
			return v
		}
		h = h[i+2:]
	}
	return ""
}

func cut(line []byte, name string) (string, bool) {
	if len(line) < len(name) || !bytes.EqualFold(line[:len(name)], []byte(name)) {
		return "", false
	}
	return string(bytes.TrimSpace(line[len(name):])), true
}
