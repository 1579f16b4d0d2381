package proxy

import (
	"bytes"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/hermes-failover/hermes/gateway/instrument"
	"github.com/hermes-failover/hermes/gateway/validate"
)

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
