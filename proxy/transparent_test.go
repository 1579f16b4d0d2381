package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hermes-failover/hermes/gateway/instrument"
	"github.com/hermes-failover/hermes/gateway/validate"
	"github.com/hermes-failover/hermes/internal/testenv"
)

const secret = "sk-live-DO-NOT-LEAK-4f3a9c"

// seen is what an upstream received.
type seen struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (s *seen) last() *http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reqs[len(s.reqs)-1]
}

// echoUpstream answers every request with a healthy completion and keeps
// what it received.
func echoUpstream(t *testing.T) (string, *seen) {
	s := &seen{}
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, r)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Upstream", "yes")
		fmt.Fprint(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"Hello there."},"finish_reason":"stop"}]}`)
	}))
	return base, s
}

// TestTransparent: path (after the route's prefix, joined to the
// upstream's own), query, method, headers (Authorization included, the
// caller's X-Forwarded-For kept, none added) reach the upstream
// unchanged, with Host set to the upstream's; the reply's headers reach
// the caller.
func TestTransparent(t *testing.T) {
	up, got := echoUpstream(t)
	base, _, _ := startProxy(t, &Config{Routes: []Route{testRoute("free", up+"/openai", validate.Rules{})}}, nil)
	req := chatRequest(t, base+"/free/v1", false)
	req.URL.RawQuery = "api-version=2024-10-21&x=a%2Fb"
	req.Header.Set("Authorization", "Bearer "+secret)
	req.Header.Set("X-Forwarded-For", "10.0.0.7")
	req.Header.Set("OpenAI-Organization", "org-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	r := got.last()
	upHost := strings.TrimPrefix(up, "http://")
	checks := []struct{ what, got, want string }{
		{"method", r.Method, http.MethodPost},
		{"path", r.URL.Path, "/openai/v1/chat/completions"},
		{"query", r.URL.RawQuery, "api-version=2024-10-21&x=a%2Fb"},
		{"Host", r.Host, upHost},
		{"Authorization", r.Header.Get("Authorization"), "Bearer " + secret},
		{"X-Forwarded-For", strings.Join(r.Header.Values("X-Forwarded-For"), ","), "10.0.0.7"},
		{"OpenAI-Organization", r.Header.Get("OpenAI-Organization"), "org-1"},
		{"reply header", resp.Header.Get("X-Upstream"), "yes"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s: %q, want %q", c.what, c.got, c.want)
		}
	}
	for _, h := range []string{"X-Forwarded-Host", "X-Forwarded-Proto", "Forwarded", "Via"} {
		if v := r.Header.Get(h); v != "" {
			t.Errorf("the proxy added %s: %q", h, v)
		}
	}

	// A route's prefix alone is the upstream's base; an unknown route is 404.
	resp, err = http.Get(base + "/free")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if p := got.last().URL.Path; p != "/openai" {
		t.Errorf("/free went to %q, want /openai", p)
	}
	resp, err = http.Get(base + "/freex/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("unknown route: %d", resp.StatusCode)
	}
}

// TestSecretsStayOut: the caller's Authorization, and an API key in the
// query, appear neither in the logs (debug level, a call that succeeds
// and one whose upstream is down) nor on /metrics.
func TestSecretsStayOut(t *testing.T) {
	up, got := echoUpstream(t)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String()
	l.Close()
	var logs bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	base, reg, _ := startProxy(t, &Config{Routes: []Route{
		testRoute("free", up, validate.Rules{}), testRoute("down", down, validate.Rules{}),
	}}, logger)
	for _, rt := range []string{"free", "down"} {
		req := chatRequest(t, base+"/"+rt+"/v1", false)
		req.URL.RawQuery = "key=" + secret
		req.Header.Set("Authorization", "Bearer "+secret)
		req.Header.Set("X-Api-Key", secret)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	if a := got.last().Header.Get("Authorization"); a != "Bearer "+secret {
		t.Fatalf("upstream got Authorization %q", a)
	}
	waitSeries(t, reg, `llm_gateway_requests_total{code="conn_error",reason="",route="down",verdict="hard_fail"} 1`)
	metrics := scrape(t, reg)
	if !strings.Contains(logs.String(), "upstream call failed") {
		t.Errorf("the failed call was not logged:\n%s", logs.String())
	}
	for what, text := range map[string]string{"logs": logs.String(), "/metrics": metrics} {
		if strings.Contains(text, secret) {
			t.Errorf("the key is in the %s:\n%s", what, text)
		}
	}
}

// scrape is reg's /metrics page.
func scrape(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	resp, err := http.Get(serve(t, h))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// waitSeries waits until reg's /metrics page has the line: the middleware
// records once the handler has returned, which may be just after the
// client has the whole reply.
func waitSeries(t *testing.T, reg *prometheus.Registry, line string) {
	t.Helper()
	testenv.EventuallyDetail(t, testLimits.TotalTimeout, line, func() (bool, string) {
		page := scrape(t, reg)
		return strings.Contains(page, line+"\n"), page
	})
}

// holdingUpstream sends a stream's first event, then holds the rest until
// release is closed or its caller goes away, which it reports on gone.
func holdingUpstream(t *testing.T) (base string, release, gone chan struct{}) {
	release, gone = make(chan struct{}), make(chan struct{}, 1)
	base = serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"},\"finish_reason\":null}]}\n\n")
		http.NewResponseController(w).Flush()
		select {
		case <-release:
			fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" there, how can I help?\"},\"finish_reason\":\"stop\"}]}\n\n")
			fmt.Fprint(w, "data: [DONE]\n\n")
		case <-r.Context().Done():
			gone <- struct{}{}
		}
	}))
	return base, release, gone
}

// TestStreamPassesEventByEvent: the first event reaches the caller while
// the upstream holds the rest, and nothing is recorded before the end.
func TestStreamPassesEventByEvent(t *testing.T) {
	up, release, _ := holdingUpstream(t)
	base, reg, _ := startProxy(t, &Config{Routes: []Route{testRoute("free", up, validate.Rules{})}}, nil)
	resp, err := http.DefaultClient.Do(chatRequest(t, base+"/free/v1", true))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	if line, err := r.ReadString('\n'); err != nil || !strings.Contains(line, `"Hello"`) {
		t.Fatalf("first event %q, %v", line, err)
	}
	if page := scrape(t, reg); strings.Contains(page, "llm_gateway_requests_total") {
		t.Fatalf("recorded before the end of the stream:\n%s", page)
	}
	close(release)
	io.Copy(io.Discard, r)
	waitSeries(t, reg, `llm_gateway_requests_total{code="200",reason="",route="free",verdict="ok"} 1`)
}

// TestCallerHangsUp: a caller that hangs up in the middle of a stream
// cancels the upstream call, and nothing is recorded.
func TestCallerHangsUp(t *testing.T) {
	up, _, gone := holdingUpstream(t)
	reg := prometheus.NewRegistry()
	p, err := New(&Config{Routes: []Route{testRoute("free", up, validate.Rules{})}}, reg, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	returned := make(chan struct{})
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(returned)
		p.ServeHTTP(w, r)
	}))
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := http.DefaultClient.Do(chatRequest(t, base+"/free/v1", true).WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	<-gone     // the upstream saw the call cancelled
	<-returned // the proxy is done with it
	if page := scrape(t, reg); strings.Contains(page, "llm_gateway_") {
		t.Fatalf("recorded:\n%s", page)
	}
}

// TestConcurrencyLimit: a request over max_concurrent_requests is answered
// 503 without reaching the upstream, counted apart, not recorded.
func TestConcurrencyLimit(t *testing.T) {
	up, release, _ := holdingUpstream(t)
	rt := testRoute("free", up, validate.Rules{})
	rt.MaxConcurrentRequests = 1
	base, reg, _ := startProxy(t, &Config{Routes: []Route{rt}}, nil)
	resp, err := http.DefaultClient.Do(chatRequest(t, base+"/free/v1", true))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	second, err := http.DefaultClient.Do(chatRequest(t, base+"/free/v1", true))
	if err != nil {
		t.Fatal(err)
	}
	second.Body.Close()
	if second.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("second call: %d, want 503", second.StatusCode)
	}
	close(release)
	if _, err := io.Copy(io.Discard, resp.Body); err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	waitSeries(t, reg, `llm_gateway_requests_total{code="200",reason="",route="free",verdict="ok"} 1`)
	page := scrape(t, reg)
	if !strings.Contains(page, `hermes_proxy_requests_refused_total{route="free"} 1`) || strings.Contains(page, `code="503"`) {
		t.Errorf("metrics:\n%s", page)
	}
}

// TestOnlyCompletionsJudged: only POSTs to the judged paths (the chat
// completions by default) are judged and recorded; GET /v1/models, other
// calls and probes (X-Hermes-Probe) pass through unrecorded. judged_paths
// changes the set.
func TestOnlyCompletionsJudged(t *testing.T) {
	up, got := echoUpstream(t)
	responses := testRoute("responses", up, validate.Rules{Format: validate.FormatJSON})
	responses.JudgedPaths = []string{"/v1/responses"}
	base, reg, _ := startProxy(t, &Config{Routes: []Route{testRoute("free", up, validate.Rules{}), responses}}, nil)
	for _, c := range []struct{ method, url string }{
		{http.MethodGet, base + "/free/v1/models"},
		{http.MethodPost, base + "/free/v1/embeddings"},
		{http.MethodGet, base + "/free/v1/chat/completions"}, // stored completions, a listing
		{http.MethodPost, base + "/responses/v1/chat/completions"},
	} {
		req, _ := http.NewRequest(c.method, c.url, strings.NewReader("{}"))
		if r := call(http.DefaultClient, req); r.status != http.StatusOK {
			t.Fatalf("%s %s: %d %v", c.method, c.url, r.status, r.err)
		}
	}
	// A probe's completion passes, with its header, and is not recorded.
	probe := chatRequest(t, base+"/free/v1", false)
	probe.Header.Set(instrument.ProbeHeader, "1")
	if r := call(http.DefaultClient, probe); r.status != http.StatusOK {
		t.Fatalf("probe: %d %v", r.status, r.err)
	}
	got.mu.Lock()
	n := len(got.reqs)
	got.mu.Unlock()
	if n != 5 || got.last().Header.Get(instrument.ProbeHeader) != "1" {
		t.Fatalf("the upstream got %d requests, want 5, the last with %s", n, instrument.ProbeHeader)
	}
	call(http.DefaultClient, chatRequest(t, base+"/free/v1", false))
	req, _ := http.NewRequest(http.MethodPost, base+"/responses/v1/responses", strings.NewReader("{}"))
	call(http.DefaultClient, req)
	waitSeries(t, reg, `llm_gateway_requests_total{code="200",reason="",route="free",verdict="ok"} 1`)
	waitSeries(t, reg, `llm_gateway_requests_total{code="200",reason="",route="responses",verdict="ok"} 1`)
	if page := scrape(t, reg); strings.Count(page, "\nllm_gateway_requests_total{") != 2 {
		t.Errorf("recorded more than the two judged calls:\n%s", page)
	}
}

// TestTotalTimeout: a stream that keeps flowing past total_timeout is cut
// (the client's read fails after the events it got) and recorded as
// truncated, as instrument records a body cut while read.
func TestTotalTimeout(t *testing.T) {
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for {
			fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"more \"},\"finish_reason\":null}]}\n\n")
			if rc.Flush() != nil {
				return
			}
			select {
			case <-r.Context().Done():
				return
			case <-time.After(20 * time.Millisecond): // the pace of the stream, the fault itself
			}
		}
	}))
	rt := testRoute("free", up, validate.Rules{})
	rt.FirstByteTimeout, rt.IdleTimeout, rt.TotalTimeout = 200*time.Millisecond, time.Second, 300*time.Millisecond
	base, reg, _ := startProxy(t, &Config{Routes: []Route{rt}}, nil)
	r := call(http.DefaultClient, chatRequest(t, base+"/free/v1", true))
	if r.err == nil || r.status != http.StatusOK || !strings.HasPrefix(string(r.body), "data: ") {
		t.Fatalf("want a 200 stream cut while read: %d %q %v", r.status, r.body, r.err)
	}
	waitSeries(t, reg, `llm_gateway_requests_total{code="200",reason="truncated",route="free",verdict="soft_fail"} 1`)
}

// TestReplyBeforeRequestEnds: an upstream may answer before the request's
// body has ended (its last chunk still on the way); the reply's first
// event must reach the caller then, and the rest of the request still
// reach the upstream. Without full duplex, net/http's server would hold
// the reply's headers until it had consumed the request body, then close
// it under the transport.
func TestReplyBeforeRequestEnds(t *testing.T) {
	rest := make(chan string, 1)
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.NewResponseController(w).EnableFullDuplex() // answers while the request goes on
		var req map[string]any
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"},\"finish_reason\":null}]}\n\n")
		http.NewResponseController(w).Flush()
		tail, _ := io.ReadAll(r.Body)
		rest <- string(tail)
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" there, how can I help?\"},\"finish_reason\":\"stop\"}]}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	base, reg, _ := startProxy(t, &Config{Routes: []Route{testRoute("free", up, validate.Rules{})}}, nil)
	pr, pw := io.Pipe()
	req, err := http.NewRequest(http.MethodPost, base+"/free/v1/chat/completions", pr) // chunked: no length
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	go fmt.Fprint(pw, `{"model":"m","stream":true,"messages":[{"role":"user","content":"Hi"}]}`)
	// Without full duplex the reply never starts: the timeout turns that
	// deadlock into a failure.
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body := bufio.NewReader(resp.Body)
	if line, err := body.ReadString('\n'); err != nil || !strings.Contains(line, `"Hello"`) {
		t.Fatalf("first event %q, %v", line, err)
	}
	fmt.Fprint(pw, "\n  ")
	pw.Close()
	if tail := <-rest; tail != "\n  " {
		t.Errorf("the end of the request reached the upstream as %q", tail)
	}
	if all, err := io.ReadAll(body); err != nil || !strings.HasSuffix(string(all), "data: [DONE]\n\n") {
		t.Fatalf("the rest of the stream: %q, %v", all, err)
	}
	waitSeries(t, reg, `llm_gateway_requests_total{code="200",reason="",route="free",verdict="ok"} 1`)
}
