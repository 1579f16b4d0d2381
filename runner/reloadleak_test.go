package runner

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/actuators/file"
	"github.com/hermes-failover/hermes/rules"
)

// TestReloadsCloseTheOldPrometheusClient: each reload built a new
// Prometheus client and left the old one's keep-alive connections open,
// each with its goroutines, until Prometheus closed them: 120 reloads took
// Hermes from 20 goroutines to 500 (issue 31, item 8). Against a Prometheus
// API served by httptest, 60 reloads, each followed by a tick that queries
// through the new client, leave the goroutine count where it was.
func TestReloadsCloseTheOldPrometheusClient(t *testing.T) {
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[]}}`))
	}))
	defer prom.Close()
	dir := t.TempDir()
	cfg := strings.Replace(string(rules.DefaultYAML), "actuators: []", "actuators:\n  - type: file\n    path: "+filepath.Join(dir, "split.json"), 1)
	cfg = strings.Replace(cfg, "url: http://127.0.0.1:9090", "url: "+prom.URL, 1)
	cfgPath := filepath.Join(dir, "hermes.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	kinds := &actuators.Registry{}
	file.Register(kinds)
	// NewQuery unset: the real Prometheus client (prometheusQueries).
	r, err := New(Options{ConfigPath: cfgPath, Registerer: prometheus.NewRegistry(), Actuators: kinds})
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Now().Truncate(time.Minute)
	tick := func() {
		ts = ts.Add(15 * time.Second)
		r.tick(t.Context(), ts)
	}
	tick()
	tick()
	before := goroutinesSettled(t, -1)
	const reloads = 60
	for range reloads {
		if err := r.reload(); err != nil {
			t.Fatal(err)
		}
		tick()
	}
	// One more reload and tick: the last client used is closed too.
	if err := r.reload(); err != nil {
		t.Fatal(err)
	}
	tick()
	// Each leaked client kept at least three goroutines (its connection's
	// read and write loops, the server's side); allow a few for timers.
	if after := goroutinesSettled(t, before+5); after > before+5 {
		t.Errorf("goroutines went from %d to %d over %d reloads: old clients keep their connections", before, after, reloads)
	}
}

// goroutinesSettled waits until the goroutine count is at most want (want < 0: until
// it stops falling), as closed connections' goroutines take a moment to
// return; it gives up after 30 s and returns the count then.
func goroutinesSettled(t *testing.T, want int) int {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	n := runtime.NumGoroutine()
	for time.Now().Before(deadline) {
		runtime.Gosched()
		time.Sleep(20 * time.Millisecond) // polling a condition, not waiting out a time
		m := runtime.NumGoroutine()
		if want >= 0 && m <= want || want < 0 && m >= n {
			return m
		}
		n = m
	}
	return n
}
