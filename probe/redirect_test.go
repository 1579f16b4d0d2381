package probe

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/internal/faults"
)

// TestRedirectToAnotherHostIsNotFollowed: a target that redirects to
// another host does not get the target's headers (and key) sent there.
func TestRedirectToAnotherHostIsNotFollowed(t *testing.T) {
	var leaked atomic.Int64
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { leaked.Add(1) }))
	defer other.Close()
	target := strings.Replace(other.URL, "127.0.0.1", "localhost", 1) // another host to net/http
	redirector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	cfg, err := Parse([]byte(fmt.Sprintf(`defaults:
  e2e: {interval: 1m, timeout: 1s, failure_threshold: 1}
targets:
  - route: free
    base_url: %s
    model: %s
    headers: {x-org-secret: s3cret}
    token_budget: {tokens: 100000, per: 24h}
prompts:
%s`, redirector.URL, faults.Model, hostilePrompt)), "probe.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(cfg, prometheus.NewRegistry(), nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	p.RunLayer(context.Background(), "free", E2E)
	if n := leaked.Load(); n != 0 {
		t.Errorf("the other host got %d probe requests with the target's headers", n)
	}
}
