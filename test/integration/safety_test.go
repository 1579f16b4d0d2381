package integration

import (
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/internal/testenv"
)

// TestSecondsTimeoutsAreUnderstood runs Hermes as users configure it, a 5 s
// tick and a 4 s query_timeout, against each real engine: the server-side
// timeout Hermes sends must be accepted (Prometheus refuses "3.6s"), so
// every signal of every route answers and no query fails.
func TestSecondsTimeoutsAreUnderstood(t *testing.T) {
	for _, b := range []testenv.Engine{testenv.Prometheus, testenv.VictoriaMetrics} {
		t.Run(b.Name, func(t *testing.T) {
			e := startEnv(t, b, ConfigOptions{EvaluationInterval: "5s", QueryTimeout: "4s"}, false, nil)
			h := e.hermes
			first := h.Status(t).LastTick
			testenv.EventuallyDetail(t, 2*time.Minute, "two more ticks with every signal answering", func() (bool, string) {
				st := h.Status(t)
				ok := st.LastTick.Sub(first) >= 10*time.Second
				var detail string
				for _, r := range []string{"free", "paid-standard", "paid-premium"} {
					rs := st.Route(r)
					ok = ok && rs.Answering()
					detail += rs.String() + "; "
				}
				return ok, detail
			})
			if n := h.Metric(t, "hermes_query_errors_total", nil); n != 0 {
				t.Errorf("hermes_query_errors_total = %v with a 4s query_timeout:\n%s", n, testenv.Tail(h.LogPath(), 20))
			}
		})
	}
}

// TestPausedRestartWithoutStateKeepsTheActuatorsSplit restarts Hermes with
// a paused service, a split file at free 0 / paid-standard 100 without
// levels (as nginx, DNS and Unleash keep it) and a Prometheus answering
// 500 to everything: the split must stay where the actuator holds it,
// never return to the first route as if all were healthy.
func TestPausedRestartWithoutStateKeepsTheActuatorsSplit(t *testing.T) {
	broken := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "internal error", http.StatusInternalServerError)
	}))
	defer broken.Close()
	dir := t.TempDir()
	h := NewHermes(t, dir)
	h.WriteConfig(t, HermesConfig(ConfigOptions{PrometheusURL: broken.URL, SplitPath: h.SplitPath}))
	held := split(0, 100, 0)
	writeJSON(t, h.SplitPath, map[string]any{"services": map[string]any{Service: map[string]any{
		"weights": held, "retries_enabled": false, "degraded_mode": false}}})
	writeJSON(t, filepath.Join(dir, "hermes-overrides.json"), map[string]any{"overrides": map[string]any{Service: map[string]any{
		"kind": "pause", "reason": "incident 42", "by": "alice", "since": time.Now().Add(-time.Hour).UTC()}}})
	rec := RecordSplit(t, h.SplitPath)
	h.Start(t)
	first := h.Status(t).LastTick
	testenv.EventuallyDetail(t, time.Minute, "three ticks after the start", func() (bool, string) {
		st := h.Status(t)
		return st.LastTick.Sub(first) >= 3*time.Second, fmt.Sprint(st.LastTick)
	})
	if st := h.Status(t); !maps.Equal(st.Weights(), held) {
		t.Errorf("status weights %v after the restart, want the held %v", st.Weights(), held)
	}
	if cur := rec.Current(); !maps.Equal(cur, held) {
		t.Errorf("split file %v after the restart, want the held %v\n%s", cur, held, joinChanges(rec.Changes()))
	}
	for _, c := range rec.Changes() {
		if !maps.Equal(c.Weights, held) {
			t.Errorf("the split file moved: %s\n%s", c, joinChanges(rec.Changes()))
		}
	}
	// Every query failed: Hermes ticked, but it is not ready.
	if code, body := h.ReadyCode(t); code != http.StatusServiceUnavailable || !strings.Contains(body, "the last tick had no data from Prometheus") {
		t.Errorf("/-/ready while Prometheus answers 500: %d %q, want 503", code, body)
	}
	if st := h.Status(t); st.Ready || !st.Ticked {
		t.Errorf("status while Prometheus answers 500: ready %v ticked %v, want ticked and not ready", st.Ready, st.Ticked)
	}
}

func writeJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}
