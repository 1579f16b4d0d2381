package browser_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/promapi"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/runner"
	"github.com/hermes-failover/hermes/web"
)

// TestStatusPageHistoryFromPrometheus: a real Prometheus scrapes a live
// runner while the free route fails over; Hermes restarts (a new runner,
// nothing in memory); the new one's status page, in Chromium, draws the
// history from before the restart out of Prometheus (query_range).
func TestStatusPageHistoryFromPrometheus(t *testing.T) {
	chromium := testenv.Binary(t, "chromium")
	dir := t.TempDir()
	// The runner's /metrics moves between processes: Prometheus scrapes
	// whichever runner the proxy points at.
	var current atomic.Pointer[http.Handler]
	metrics := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if h := current.Load(); h != nil {
			(*h).ServeHTTP(w, r)
			return
		}
		http.Error(w, "no runner", http.StatusServiceUnavailable)
	}))
	defer metrics.Close()
	target, _ := url.Parse(metrics.URL)
	prom := testenv.StartTSDB(t, testenv.Prometheus,
		fmt.Sprintf("global: {scrape_interval: 1s}\nscrape_configs:\n  - job_name: hermes\n    static_configs: [{targets: ['%s']}]\n", target.Host), "")

	cfg := strings.Replace(string(rules.DefaultYAML), "evaluation_interval: 15s", "evaluation_interval: 1s", 1)
	cfg = strings.Replace(cfg, "query_timeout: 10s", "query_timeout: 500ms", 1)
	cfg = strings.Replace(cfg, "url: http://127.0.0.1:9090", "url: "+prom.URL, 1)
	if !strings.Contains(cfg, prom.URL) {
		t.Fatal("the default policy's prometheus.url changed; update this test")
	}
	cfgPath := filepath.Join(dir, "hermes.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	start := func() (*runner.Runner, *httptest.Server, context.CancelFunc) {
		reg := prometheus.NewRegistry()
		r, err := runner.New(runner.Options{ConfigPath: cfgPath, Registerer: reg, Logger: slog.New(slog.DiscardHandler),
			NewQuery: func(*config.Config, *slog.Logger) (promapi.QueryFunc, error) { return query, nil }})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		go func() { _ = r.Run(ctx) }()
		h := web.Handler(web.Options{Loop: web.Live(r), Gatherer: reg})
		current.Store(&h)
		return r, httptest.NewServer(h), cancel
	}

	r1, srv1, stop1 := start()
	testenv.Eventually(t, 30*time.Second, "free failed over", func() bool {
		st := web.StatusOf(r1.View())
		return len(st.Services) > 0 && st.Services[0].Weights["free"] == 0 && st.Services[0].Weights["paid-standard"] > 0
	})
	testenv.EventuallyDetail(t, 60*time.Second, "Prometheus holding the failover", func() (bool, string) {
		v, err := prom.QueryValue(`count_over_time(hermes_route_score{route="free"}[1m])`)
		return err == nil && v >= 5, fmt.Sprintf("%v %v", v, err)
	})
	stop1()
	srv1.Close()

	r2, srv2, stop2 := start()
	defer func() { stop2(); srv2.Close() }()
	testenv.Eventually(t, 30*time.Second, "the new runner's first tick", func() bool { return web.StatusOf(r2.View()).Ready })
	ticks, _, source := r2.History(context.Background(), time.Now().Add(-time.Hour))
	if source != "prometheus" || len(ticks) < 5 {
		t.Fatalf("history after the restart: %d ticks from %s, want Prometheus's", len(ticks), source)
	}

	dom := browse(t, chromium, "--dump-dom", srv2.URL+"/")
	for _, want := range []string{"from Prometheus", `aria-label="route free: score"`, `data-label="shed ≥ 60"`} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page lacks %q", want)
		}
	}
	// The free route's line reaches the bottom (score 0) before the restart.
	line := regexp.MustCompile(`<path class="series" data-name="free" d="([^"]+)"`).FindStringSubmatch(dom)
	if line == nil || !strings.Contains(line[1], ",192.0") {
		t.Errorf("the free route's score line does not show the failover: %v", line)
	}
	if t.Failed() {
		t.Logf("DOM:\n%s", dom)
	}
	screenshot(t, chromium, "status-page-history.png", srv2.URL+"/", "1200,1400")
}
