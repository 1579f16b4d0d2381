package proxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	commoncfg "github.com/prometheus/common/config"
	"github.com/valyala/fasthttp"

	"github.com/hermes-failover/hermes/internal/faults"
)

// newTestH1 is the pool a route without a proxy gets.
func newTestH1(t *testing.T) *h1Transport {
	t.Helper()
	rt, h, err := upstreamTransport(commoncfg.DefaultHTTPClientConfig, "test")
	if err != nil {
		t.Fatal(err)
	}
	if h == nil {
		t.Fatalf("a route without a proxy got no pool of its own, only %T", rt)
	}
	t.Cleanup(h.CloseIdleConnections)
	return h
}

// leanRT is h1Transport's lean exchange (do) as an http.RoundTripper, for
// these tests: the request as net/http's Request.Write writes it (its
// body read whole), the reply's fasthttp header turned into an
// http.Response whose body is do's.
type leanRT struct{ t *h1Transport }

func (l leanRT) RoundTrip(req *http.Request) (*http.Response, error) {
	var buf bytes.Buffer
	if err := req.Write(&buf); err != nil {
		return nil, err
	}
	key := connKey{scheme: req.URL.Scheme, addr: req.URL.Host}
	if req.URL.Port() == "" {
		port := "80"
		if key.scheme == "https" {
			port = "443"
		}
		key.addr = net.JoinHostPort(req.URL.Hostname(), port)
	}
	replayable := req.Method == http.MethodGet || req.Method == http.MethodHead || len(req.Header["Idempotency-Key"]) > 0
	var hdr fasthttp.ResponseHeader
	b, err := l.t.do(req.Context(), nil, key, req.URL.Hostname(), buf.Bytes(), nil, req.Method == http.MethodHead, replayable, &hdr)
	if err != nil {
		return nil, err
	}
	resp := &http.Response{StatusCode: hdr.StatusCode(), Header: http.Header{}, Body: b,
		ContentLength: int64(hdr.ContentLength()), Request: req, TLS: b.c.state}
	hdr.VisitAll(func(k, v []byte) { resp.Header.Add(string(k), string(v)) })
	return resp, nil
}

// countingServer is a real loopback server that counts the connections
// it accepted.
func countingServer(t *testing.T, h http.Handler) (*httptest.Server, *atomic.Int32) {
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	return srv, &conns
}

// post is a chat request as the proxy sends it: its small body read
// ahead, so that GetBody can send it again.
func post(t *testing.T, ctx context.Context, url string, header http.Header) *http.Request {
	t.Helper()
	body := `{"model":"m","messages":[{"role":"user","content":"hi"}]}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range header {
		req.Header[k] = v
	}
	return req
}

func roundTrip(t *testing.T, rt http.RoundTripper, req *http.Request) string {
	t.Helper()
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatalf("%s %s: %v", req.Method, req.URL, err)
	}
	b, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatalf("reading the reply: %v", err)
	}
	return string(b)
}

// TestH1KeepAlive: replies of known length, chunked and empty leave their
// connection in the pool, and the next request reuses it.
func TestH1KeepAlive(t *testing.T) {
	srv, conns := countingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		switch r.URL.Path {
		case "/chunked":
			io.WriteString(w, "one ")
			w.(http.Flusher).Flush()
			io.WriteString(w, "two")
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		default:
			w.Header().Set("Content-Length", "5")
			io.WriteString(w, "hello")
		}
	}))
	h := newTestH1(t)
	key := connKey{"http", strings.TrimPrefix(srv.URL, "http://")}
	for i, c := range []struct{ path, want string }{{"/length", "hello"}, {"/chunked", "one two"}, {"/empty", ""}, {"/length", "hello"}} {
		if got := roundTrip(t, leanRT{h}, post(t, context.Background(), srv.URL+c.path, nil)); got != c.want {
			t.Errorf("request %d (%s): %q, want %q", i, c.path, got, c.want)
		}
		if n := h.idleCount(key); n != 1 {
			t.Errorf("after request %d (%s): %d idle connections, want 1", i, c.path, n)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Errorf("the upstream saw %d connections for 4 requests in turn, want 1", n)
	}
}

// TestH1ConnectionClose: a reply that says Connection: close, or whose
// body was not read to its end, closes its connection instead of
// pooling it.
func TestH1ConnectionClose(t *testing.T) {
	srv, conns := countingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/close" {
			w.Header().Set("Connection", "close")
		}
		io.WriteString(w, strings.Repeat("x", 64<<10))
	}))
	h := newTestH1(t)
	key := connKey{"http", strings.TrimPrefix(srv.URL, "http://")}
	roundTrip(t, leanRT{h}, post(t, context.Background(), srv.URL+"/close", nil))
	if n := h.idleCount(key); n != 0 {
		t.Errorf("Connection: close: %d idle connections, want 0", n)
	}
	resp, err := leanRT{h}.RoundTrip(post(t, context.Background(), srv.URL+"/open", nil))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := resp.Body.Read(make([]byte, 10)); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := h.idleCount(key); n != 0 {
		t.Errorf("a body closed before its end: %d idle connections, want 0", n)
	}
	if _, err := resp.Body.Read(make([]byte, 10)); err == nil {
		t.Error("a read after Close succeeded")
	}
	roundTrip(t, leanRT{h}, post(t, context.Background(), srv.URL+"/open", nil))
	if n := conns.Load(); n != 3 {
		t.Errorf("the upstream saw %d connections, want 3 (none reused)", n)
	}
}

// TestH1PoolBound: no more than MaxIdleConnsPerHost connections stay idle
// per host; the others are closed when their reply ends.
func TestH1PoolBound(t *testing.T) {
	const open = 5
	var arrived sync.WaitGroup
	arrived.Add(open)
	release := make(chan struct{})
	srv, conns := countingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		arrived.Done()
		<-release
		io.WriteString(w, "ok")
	}))
	h := newTestH1(t)
	h.maxIdle = 2
	key := connKey{"http", strings.TrimPrefix(srv.URL, "http://")}
	var wg sync.WaitGroup
	errs := make(chan error, open)
	for range open {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := leanRT{h}.RoundTrip(post(t, context.Background(), srv.URL, nil))
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			errs <- err
		}()
	}
	arrived.Wait()
	close(release)
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := conns.Load(); n != open {
		t.Errorf("%d connections for %d requests at once, want %d", n, open, open)
	}
	if n := h.idleCount(key); n != 2 {
		t.Errorf("%d idle connections, want the bound, 2", n)
	}
}

// rawServer is a loopback server that runs serve on each connection it
// accepts.
func rawServer(t *testing.T, serve func(c net.Conn, br *bufio.Reader)) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var open []net.Conn
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range open {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			open = append(open, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				serve(c, bufio.NewReader(c))
			}()
		}
	}()
	return "http://" + l.Addr().String()
}

// TestH1StaleConn: a pooled connection the upstream closed while it was
// idle is not used; one it closes on the next request is retried once on
// a fresh connection when the request may be sent again, as net/http's
// Transport does (an idempotent method or an Idempotency-Key), and fails
// otherwise, since the upstream may have acted on it.
func TestH1StaleConn(t *testing.T) {
	var conns, served atomic.Int32
	// Each connection answers one request, then either closes at once
	// (/idle-close) or reads the next request and closes without an answer.
	base := rawServer(t, func(c net.Conn, br *bufio.Reader) {
		conns.Add(1)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		served.Add(1)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		if req.URL.Path == "/idle-close" {
			return
		}
		if req, err := http.ReadRequest(br); err == nil {
			io.Copy(io.Discard, req.Body)
		}
	})
	h := newTestH1(t)
	key := connKey{"http", strings.TrimPrefix(base, "http://")}

	// Closed while idle: seen before the request is sent.
	roundTrip(t, leanRT{h}, post(t, context.Background(), base+"/idle-close", nil))
	h.mu.Lock()
	pooled := h.idle[key][0]
	h.mu.Unlock()
	waitFor(t, "the upstream's close to reach the pooled connection", func() bool { return closedByPeer(t, pooled.tcp) })
	if got := roundTrip(t, leanRT{h}, post(t, context.Background(), base+"/idle-close", nil)); got != "ok" {
		t.Errorf("after an idle close: %q", got)
	}
	if c, s := conns.Load(), served.Load(); c != 2 || s != 2 {
		t.Errorf("after an idle close: %d connections, %d served; want 2, 2", c, s)
	}

	// Closed on the next request.
	for _, c := range []struct {
		name   string
		method string
		header http.Header
		retry  bool
	}{
		{"GET", http.MethodGet, nil, true},
		{"POST with an Idempotency-Key", http.MethodPost, http.Header{"Idempotency-Key": {"k1"}}, true},
		{"POST", http.MethodPost, nil, false},
	} {
		h.CloseIdleConnections()
		roundTrip(t, leanRT{h}, post(t, context.Background(), base+"/", nil))
		c0, s0 := conns.Load(), served.Load()
		req := post(t, context.Background(), base+"/", c.header)
		req.Method = c.method
		resp, err := leanRT{h}.RoundTrip(req)
		if !c.retry {
			if err == nil {
				resp.Body.Close()
				t.Errorf("%s: answered on a connection closed under it; want an error", c.name)
			}
			if n := conns.Load() - c0; n != 0 {
				t.Errorf("%s: sent again on %d new connections; want none", c.name, n)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v; want a retry on a fresh connection", c.name, err)
			continue
		}
		resp.Body.Close()
		if n, s := conns.Load()-c0, served.Load()-s0; n != 1 || s != 1 {
			t.Errorf("%s: %d new connections, %d served; want 1, 1", c.name, n, s)
		}
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("waited 10 s for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestH1Cancel: a cancelled context ends a call waiting for the headers
// (the upstream has the request and never answers) and one reading a
// stalled body (internal/faults), and closes the connection.
func TestH1Cancel(t *testing.T) {
	got := make(chan struct{}, 1)
	silent := rawServer(t, func(c net.Conn, br *bufio.Reader) {
		if req, err := http.ReadRequest(br); err == nil {
			io.Copy(io.Discard, req.Body)
			got <- struct{}{}
		}
		io.Copy(io.Discard, br) // until the client closes
	})
	up := faults.Start(t)
	h := newTestH1(t)
	for _, c := range []struct {
		name, url string
		key       connKey
	}{
		{"no answer", silent + "/v1/chat/completions", connKey{"http", strings.TrimPrefix(silent, "http://")}},
		{"stalled body", up.BaseURL(faults.Stall) + "/chat/completions", connKey{"http", strings.TrimPrefix(up.URL, "http://")}},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		req := post(t, ctx, c.url, nil)
		done := make(chan error, 1)
		var resp *http.Response
		if c.name == "stalled body" {
			// The headers come, then the body stops: the read under way
			// when the call is cancelled is the body's.
			var err error
			if resp, err = (leanRT{h}).RoundTrip(req); err != nil {
				t.Fatalf("%s: %v", c.name, err)
			}
		}
		go func() {
			var err error
			if resp == nil {
				resp, err = leanRT{h}.RoundTrip(req)
			}
			if err == nil {
				_, err = io.ReadAll(resp.Body)
				resp.Body.Close()
			}
			done <- err
		}()
		if c.name == "no answer" {
			<-got // the request is upstream; the call waits for the headers
		}
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("%s: %v, want context.Canceled", c.name, err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the call went on 10 s after its cancel", c.name)
		}
		if n := h.idleCount(c.key); n != 0 {
			t.Errorf("%s: %d idle connections after a cancel, want 0", c.name, n)
		}
	}
}

// TestH1Reset: an upstream that resets the connection before any header
// is an error, not retried on a fresh connection.
func TestH1Reset(t *testing.T) {
	up := faults.Start(t)
	h := newTestH1(t)
	resp, err := leanRT{h}.RoundTrip(post(t, context.Background(), up.BaseURL(faults.ResetBeforeHeaders)+"/chat/completions", nil))
	if err == nil {
		resp.Body.Close()
		t.Fatal("a reset connection answered")
	}
}

// TestH1Informational: 1xx replies before the reply are read past (nginx
// drops them too), then the reply is returned and its connection kept.
func TestH1Informational(t *testing.T) {
	base := rawServer(t, func(c net.Conn, br *bufio.Reader) {
		for {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			io.Copy(io.Discard, req.Body)
			io.WriteString(c, "HTTP/1.1 103 Early Hints\r\nLink: </style.css>; rel=preload\r\n\r\n"+
				"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
		}
	})
	h := newTestH1(t)
	for i := range 2 {
		if got := roundTrip(t, leanRT{h}, post(t, context.Background(), base, nil)); got != "ok" {
			t.Errorf("reply %d: %q, want ok", i, got)
		}
	}
	if n := h.idleCount(connKey{"http", strings.TrimPrefix(base, "http://")}); n != 1 {
		t.Errorf("%d idle connections after two replies with a 103 each, want 1", n)
	}
}

// BenchmarkTransport compares net/http's Transport with the lean
// exchange (through leanRT, which adds Request.Write and an http.Header) on a chat request and a 1.5 kB reply from a loopback server,
// 64 callers at once (make bench-proxy's wrk -c64). CPU time is the
// figure to read (-benchmem, and the time per op beside the same run's
// other transport): the server shares the process.
func BenchmarkTransport(b *testing.B) {
	reply := strings.Repeat("x", 1500)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, reply)
	}))
	defer srv.Close()
	body := []byte(`{"model":"m","messages":[{"role":"user","content":"Tell me about foxes."}]}`)
	for _, name := range []string{"net-http", "h1"} {
		b.Run(name, func(b *testing.B) {
			rt, h, err := upstreamTransport(commoncfg.DefaultHTTPClientConfig, "bench")
			if err != nil {
				b.Fatal(err)
			}
			var tr http.RoundTripper = leanRT{h}
			if name == "net-http" {
				tr = rt
			}
			defer h.CloseIdleConnections()
			b.SetParallelism(32) // 64 callers on 2 cores
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				buf := make([]byte, 4<<10)
				for pb.Next() {
					req, _ := http.NewRequest(http.MethodPost, srv.URL+"/v1/chat/completions", bytes.NewReader(body))
					resp, err := tr.RoundTrip(req)
					if err != nil {
						b.Error(err)
						return
					}
					for {
						if _, err := resp.Body.Read(buf); err != nil {
							break
						}
					}
					resp.Body.Close()
				}
			})
		})
	}
}
