//go:build linux

package proxy

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/gateway/validate"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// startLoops serves p on its Front until the test ends and returns the
// front's base URL and its loops.
func startLoops(t *testing.T, p *Proxy) (string, *loops) {
	t.Helper()
	srv := p.Server(http.HandlerFunc(NoRoute))
	if srv.loops == nil {
		t.Fatal("no event loops on Linux")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.ShutdownWithContext(ctx)
	})
	return "http://" + l.Addr().String(), srv.loops
}

// TestLoopsTakePlainCalls checks which requests the event loops pass
// themselves (a route's plain calls, one after another on a kept
// connection) and which connections they hand to the fasthttp server
// (another path, a body past maxReadAhead, HEAD), each answered alike.
func TestLoopsTakePlainCalls(t *testing.T) {
	up, _ := echoUpstream(t)
	cfg := &Config{Routes: []Route{testRoute("free", up, validate.Rules{})}}
	p, err := New(cfg, prometheus.NewRegistry(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	base, ls := startLoops(t, p)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	call := func(method, path string, body []byte) int {
		t.Helper()
		req, err := http.NewRequest(method, base+path, bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	for range 3 {
		if got := call(http.MethodPost, "/free/v1/chat/completions", []byte(`{"model":"m"}`)); got != http.StatusOK {
			t.Fatalf("status %d", got)
		}
	}
	if s, h := ls.served(), ls.handed.Load(); s != 3 || h != 0 {
		t.Fatalf("the loops passed %d calls and handed %d connections on, want 3 and 0", s, h)
	}
	for _, c := range []struct {
		method, path string
		body         []byte
		status       int
	}{
		{http.MethodGet, "/metrics-or-anything", nil, http.StatusNotFound},
		{http.MethodPost, "/free/v1/chat/completions", bytes.Repeat([]byte("x"), maxReadAhead+1), http.StatusOK},
		{http.MethodHead, "/free/v1/models", nil, http.StatusOK},
	} {
		before := ls.handed.Load()
		client.CloseIdleConnections()
		if got := call(c.method, c.path, c.body); got != c.status {
			t.Errorf("%s %s: status %d, want %d", c.method, c.path, got, c.status)
		}
		if ls.handed.Load() != before+1 {
			t.Errorf("%s %s (%d bytes): not handed to the fasthttp server", c.method, c.path, len(c.body))
		}
	}
}

// TestLoopsStopReadingForASlowCaller checks the back-pressure: a caller
// that reads nothing of a fast upstream's long reply holds the upstream's
// writes back (the loop stops reading the upstream while the caller's
// socket is full) instead of the proxy buffering the reply.
func TestLoopsStopReadingForASlowCaller(t *testing.T) {
	const total = 256 << 20 // a reply long enough to fill any socket buffers on the way
	var written atomic.Int64
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		chunk := []byte("data: " + strings.Repeat("x", 64<<10-8) + "\n\n")
		for written.Load() < total {
			if _, err := w.Write(chunk); err != nil {
				return
			}
			written.Add(int64(len(chunk)))
			w.(http.Flusher).Flush()
		}
	}))
	cfg := &Config{Routes: []Route{testRoute("free", up, validate.Rules{})}}
	p, err := New(cfg, prometheus.NewRegistry(), slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	base, _ := startLoops(t, p)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprintf(conn, "POST /free/v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}")
	br := bufio.NewReader(conn)
	if _, err := br.Peek(1); err != nil {
		t.Fatal(err)
	}
	// The upstream writes until the sockets on the way are full: the
	// kernel's buffers, a few MiB on loopback; then its writes wait. The
	// caller then waits past the route's idle_timeout (a second), which a
	// held-back upstream must not be charged with.
	var last int64
	testenv.Eventually(t, 20*time.Second, "the upstream's writes held back", func() bool {
		n := written.Load()
		stable := n == last
		last = n
		time.Sleep(200 * time.Millisecond) // between two looks at the count
		return stable && n > 0
	})
	if n := written.Load(); n > 64<<20 {
		t.Fatalf("the upstream wrote %d MiB to a caller that read nothing", n>>20)
	}
	idle := time.NewTimer(testLimits.IdleTimeout + 500*time.Millisecond)
	<-idle.C // the caller reads nothing for longer than the idle gap
	// Once the caller reads, the rest flows.
	if _, err := io.CopyN(io.Discard, br, 32<<20); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "the upstream writing again", func() bool { return written.Load() > last })
}

// TestLoopsDrain checks a shutdown: an idle kept connection is closed at
// once, an open stream runs to its end before the shutdown returns, is
// recorded, and its connection is closed after it.
func TestLoopsDrain(t *testing.T) {
	up, release, _ := holdingUpstream(t)
	cfg := &Config{Routes: []Route{testRoute("free", up, validate.Rules{})}}
	reg := prometheus.NewRegistry()
	p, err := New(cfg, reg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	srv := p.Server(http.HandlerFunc(NoRoute))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(l) }()

	idle, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	stream, err := net.Dial("tcp", l.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()
	body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"hi"}]}`
	fmt.Fprintf(stream, "POST /free/v1/chat/completions HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	br := bufio.NewReader(stream)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	first, err := bufio.NewReader(resp.Body).ReadString('\n')
	if err != nil || !strings.HasPrefix(first, "data: ") {
		t.Fatalf("first event %q, %v", first, err)
	}

	down := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		down <- srv.ShutdownWithContext(ctx)
	}()
	// The idle connection is closed: its read ends.
	if err := idle.SetReadDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	if n, err := idle.Read(make([]byte, 1)); err == nil || n != 0 || errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the idle connection read %d bytes, %v; want its end", n, err)
	}
	select {
	case err := <-down:
		t.Fatalf("the shutdown returned (%v) with a stream open", err)
	default:
	}
	close(release)
	rest, err := io.ReadAll(resp.Body)
	if err != nil || !strings.Contains(string(rest), "[DONE]") {
		t.Fatalf("the rest of the stream: %q, %v", rest, err)
	}
	// Its connection then closes (its reply's head left before the
	// shutdown, so it could not say Connection: close).
	if _, err := br.Peek(1); err != io.EOF {
		t.Errorf("after the stream, the connection read %v, want its end", err)
	}
	if err := <-down; err != nil {
		t.Fatalf("shutdown: %v", err)
	}
	if err := <-served; err != nil {
		t.Fatalf("Serve after the shutdown: %v", err)
	}
	waitSeries(t, reg, `llm_gateway_requests_total{code="200",reason="",route="free",verdict="ok"} 1`)
}

// TestLoopsAtNight is a route at night: one call at a time with the
// upstream closing its kept connection between them (its keep-alive
// timeout, here short). Each call is a chat completion POST, which is
// never sent twice; each must reach the upstream on a live connection
// and be recorded ok, with no conn_error that no call caused. The loop
// sees the close in its epoll set, and looks at a kept connection before
// it uses one.
func TestLoopsAtNight(t *testing.T) {
	var closed atomic.Int32
	srv := &http.Server{
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"Hello there."},"finish_reason":"stop"}]}`)
		}),
		IdleTimeout:       100 * time.Millisecond,
		ReadHeaderTimeout: 5 * time.Second,
		ConnState: func(_ net.Conn, s http.ConnState) {
			if s == http.StateClosed {
				closed.Add(1)
			}
		},
	}
	ul, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(ul)
	t.Cleanup(func() { srv.Close() })
	cfg := &Config{Routes: []Route{testRoute("free", "http://"+ul.Addr().String(), validate.Rules{})}}
	reg := prometheus.NewRegistry()
	p, err := New(cfg, reg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	base, ls := startLoops(t, p)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 1}}
	const calls = 5
	for i := range calls {
		r := call(client, chatRequest(t, base+"/free/v1", false))
		if r.status != http.StatusOK || r.err != nil {
			t.Fatalf("call %d: %d %q (%v)", i, r.status, r.body, r.err)
		}
		// The upstream closes the connection the call left kept.
		want := int32(i + 1)
		testenv.Eventually(t, 10*time.Second, "the upstream closing its kept connection", func() bool { return closed.Load() >= want })
	}
	if n := ls.served(); n != calls {
		t.Fatalf("the loops passed %d calls, want %d", n, calls)
	}
	waitSeries(t, reg, fmt.Sprintf(`llm_gateway_requests_total{code="200",reason="",route="free",verdict="ok"} %d`, calls))
	for k := range contract(t, reg) {
		if strings.Contains(k, "conn_error") {
			t.Errorf("recorded %s", k)
		}
	}
}
