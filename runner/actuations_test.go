package runner

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/promapi"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/runner/persist"
)

// newFlakyRunner runs the shipped policy with flaky as its one actuator,
// fed by fp.
func newFlakyRunner(t *testing.T, fp *fakeProm, flaky *flakyActuator) (*Runner, *prometheus.Registry) {
	t.Helper()
	dir := t.TempDir()
	cfg := strings.Replace(string(rules.DefaultYAML), "actuators: []", "actuators:\n  - type: flaky", 1)
	cfgPath := filepath.Join(dir, "hermes.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	kinds := &actuators.Registry{}
	kinds.Register("flaky", func(actuators.Settings) (actuators.Actuator, error) { return flaky, nil })
	reg := prometheus.NewRegistry()
	r, err := New(Options{ConfigPath: cfgPath, Registerer: reg, Actuators: kinds,
		NewQuery: func(*config.Config, *slog.Logger) (promapi.QueryFunc, error) { return fp.query, nil }})
	if err != nil {
		t.Fatal(err)
	}
	return r, reg
}

// TestActuationsAreExportedAndRemembered: the applies that change the
// backend's split and the first failure of an outage are what the runner
// remembers for the charts, and what it exports for Prometheus to keep:
// the split the backend holds and since when it fails. Re-asserting an
// unchanged split, or failing again, adds nothing.
func TestActuationsAreExportedAndRemembered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.02}
		flaky := &flakyActuator{}
		r, reg := newFlakyRunner(t, fp, flaky)
		remembered := func() []evaluator.Actuation {
			r.mu.Lock()
			defer r.mu.Unlock()
			return r.history.Actuations(time.Time{})
		}
		held := func(route string) float64 {
			return testenv.Metric(t, reg, persist.MetricActuatorTrafficRatio, map[string]string{"actuator": "flaky", "service": "chat", "route": route})
		}
		failingSince := func() float64 {
			return testenv.Metric(t, reg, persist.MetricActuatorFailingSince, map[string]string{"actuator": "flaky"})
		}
		stop := start(t, r)
		time.Sleep(time.Minute)
		synctest.Wait()
		if acts := remembered(); len(acts) != 0 || held("free") != 1 || failingSince() != 0 {
			t.Fatalf("healthy ticks: %v remembered, free held at %v, failing since %v", acts, held("free"), failingSince())
		}

		fp.mu.Lock()
		fp.soft = 0.5
		fp.mu.Unlock()
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		acts := remembered()
		last := acts[len(acts)-1]
		if last.Result != evaluator.ActuationApplied || last.Actuator != "flaky" || last.Service != "chat" || last.Weights["free"] != 0 || last.Weights["paid-standard"] != 100 {
			t.Fatalf("after the failover the last actuation is %+v, want flaky applying chat free 0%%, paid-standard 100%%", last)
		}
		changed := testenv.Metric(t, reg, persist.MetricActuatorChanged, map[string]string{"actuator": "flaky", "service": "chat"})
		if changed != float64(last.Time.UnixMilli())/1e3 {
			t.Errorf("%s = %v, want the last apply's %s", persist.MetricActuatorChanged, changed, last.Time)
		}
		if held("free") != 0 || held("paid-standard") != 1 {
			t.Errorf("held after the failover: free %v, paid-standard %v", held("free"), held("paid-standard"))
		}
		applied := len(acts)

		flaky.mu.Lock()
		flaky.broken = true
		flaky.mu.Unlock()
		brokeAt := time.Now()
		time.Sleep(2 * time.Minute) // eight failing ticks
		synctest.Wait()
		acts = remembered()
		if len(acts) != applied+1 {
			t.Fatalf("an outage of eight ticks left %d actuations, want one failure: %v", len(acts)-applied, acts[applied:])
		}
		failed := acts[applied]
		if failed.Result != evaluator.ActuationFailed || failed.Service != "chat" || failed.Error != "backend unreachable" ||
			failed.Time.Before(brokeAt) || failed.Time.After(brokeAt.Add(15*time.Second)) {
			t.Errorf("failure remembered as %+v, want chat at the first tick after %s with the error", failed, brokeAt)
		}
		if got := failingSince(); got != float64(failed.Time.Unix()) {
			t.Errorf("%s = %v, want %d (the first failure)", persist.MetricActuatorFailingSince, got, failed.Time.Unix())
		}
		if !strings.Contains(failed.String(), "actuator flaky failed on chat: backend unreachable") {
			t.Errorf("tooltip %q", failed.String())
		}

		flaky.mu.Lock()
		flaky.broken = false
		flaky.mu.Unlock()
		time.Sleep(time.Minute)
		synctest.Wait()
		if got := failingSince(); got != 0 {
			t.Errorf("%s = %v after recovery, want 0", persist.MetricActuatorFailingSince, got)
		}
		stop()
	})
}

// TestReloadForgetsRemovedActuators: once a reload removes an actuator,
// its series go from /metrics and it leaves the status, instead of
// standing at their last values until Hermes restarts.
func TestReloadForgetsRemovedActuators(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.02}
		r, reg := newFlakyRunner(t, fp, &flakyActuator{})
		series := func() []string {
			mfs, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			var out []string
			for _, mf := range mfs {
				for _, m := range mf.GetMetric() {
					for _, l := range m.GetLabel() {
						if l.GetName() == persist.ActuatorLabel && l.GetValue() == "flaky" {
							out = append(out, mf.GetName())
						}
					}
				}
			}
			return out
		}
		stop := start(t, r)
		time.Sleep(time.Minute)
		synctest.Wait()
		if got := series(); len(got) < 5 || len(status(r).Actuators) != 1 {
			t.Fatalf("before the reload: series %v, status %+v", got, status(r).Actuators)
		}
		if err := os.WriteFile(r.opts.ConfigPath, rules.DefaultYAML, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := r.Reload(t.Context()); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if got := series(); len(got) != 0 {
			t.Errorf("series of the removed actuator: %v", got)
		}
		if acts := status(r).Actuators; len(acts) != 0 {
			t.Errorf("status still lists %+v", acts)
		}
		stop()
	})
}

// TestActuationsFallBackOnMemory: when Prometheus does not answer, the
// status page gets the actuations this process remembers, and says so.
func TestActuationsFallBackOnMemory(t *testing.T) {
	r, _ := newFlakyRunner(t, &fakeProm{}, &flakyActuator{})
	down := "http://" + testenv.FreeAddr(t) // nothing listens there
	t0 := time.Now().Truncate(time.Second)
	applied := evaluator.Actuation{Time: t0, Actuator: "flaky", Service: "chat", Weights: map[string]int{"free": 0}, Result: evaluator.ActuationApplied}
	r.mu.Lock()
	r.cfg.Prometheus.URL = down
	r.lastTick = t0
	r.history.AddActuation(applied)
	r.mu.Unlock()
	acts, source := r.Actuations(t.Context(), t0.Add(-time.Hour))
	if source != "memory" || len(acts) != 1 || acts[0].String() != applied.String() {
		t.Errorf("with Prometheus down: %v from %s, want %v from memory", acts, source, applied)
	}
}

// TestActuationsFromPrometheusWithTheLatest: Prometheus holds an
// actuation only once it has scraped Hermes after it; until then the page
// gets the latest ones from memory, next to those Prometheus returns, and
// none twice.
func TestActuationsFromPrometheusWithTheLatest(t *testing.T) {
	r, _ := newFlakyRunner(t, &fakeProm{}, &flakyActuator{})
	t0 := time.Now().Truncate(time.Second)
	t1, t2 := t0.Add(-2*time.Minute), t0.Add(-time.Second)
	// Prometheus scraped the apply at t1, not yet the one at t2.
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		q := req.FormValue("query")
		result := "[]"
		switch {
		case strings.Contains(q, persist.MetricActuatorChanged):
			result = fmt.Sprintf(`[{"metric":{"actuator":"flaky","service":"chat"},"values":[[%d,"%d"]]}]`, t0.Add(-time.Minute).Unix(), t1.Unix())
		case strings.Contains(q, persist.MetricActuatorTrafficRatio):
			result = fmt.Sprintf(`[{"metric":{"actuator":"flaky","service":"chat","route":"free"},"values":[[%d,"0"]]}]`, t0.Add(-time.Minute).Unix())
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"status":"success","data":{"resultType":"matrix","result":%s}}`, result)
	}))
	defer prom.Close()
	older := evaluator.Actuation{Time: t1.UTC(), Actuator: "flaky", Service: "chat", Weights: map[string]int{"free": 0}, Result: evaluator.ActuationApplied}
	latest := evaluator.Actuation{Time: t2.UTC(), Actuator: "flaky", Service: "chat", Weights: map[string]int{"free": 10}, Result: evaluator.ActuationApplied}
	r.mu.Lock()
	r.cfg.Prometheus.URL = prom.URL
	r.lastTick = t0
	r.history.AddActuation(older)
	r.history.AddActuation(latest)
	r.mu.Unlock()
	acts, source := r.Actuations(t.Context(), t0.Add(-time.Hour))
	var got []string
	for _, a := range acts {
		got = append(got, a.Time.Format(time.TimeOnly)+" "+a.String())
	}
	want := []string{t1.UTC().Format(time.TimeOnly) + " " + older.String(), t2.UTC().Format(time.TimeOnly) + " " + latest.String()}
	if source != "prometheus" || !slices.Equal(got, want) {
		t.Errorf("actuations %q from %s\nwant %q from prometheus", got, source, want)
	}
}

// TestDriftCountsUntilAcknowledged: a backend that took free=100, then
// fails every apply while the core fails free over. It still holds
// free=100 (a webhook's receiver that acknowledged nothing since), so
// hermes_actuator_drift is 1 until an apply succeeds; it used to stay 0,
// set by the last successful apply.
func TestDriftCountsUntilAcknowledged(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.02}
		flaky := &flakyActuator{}
		r, reg := newFlakyRunner(t, fp, flaky)
		drift := func() float64 {
			return testenv.Metric(t, reg, "hermes_actuator_drift", map[string]string{"actuator": "flaky"})
		}
		stop := start(t, r)
		time.Sleep(20 * time.Second)
		synctest.Wait()
		if d := drift(); d != 0 {
			t.Fatalf("setup: drift %v after a successful apply", d)
		}
		flaky.mu.Lock()
		flaky.broken = true
		flaky.mu.Unlock()
		fp.mu.Lock()
		fp.soft = 0.5
		fp.mu.Unlock()
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		if got := status(r).Services[0].Weights["free"]; got != 0 {
			t.Fatalf("setup: the core did not fail free over: free=%d", got)
		}
		if d := drift(); d != 1 {
			t.Errorf("hermes_actuator_drift = %v while every apply of the failover fails, want 1", d)
		}
		flaky.mu.Lock()
		flaky.broken = false
		flaky.mu.Unlock()
		time.Sleep(15 * time.Second)
		synctest.Wait()
		if d := drift(); d != 0 {
			t.Errorf("hermes_actuator_drift = %v once the backend took the failover, want 0", d)
		}
		stop()
	})
}

// stepActuator is a backend that keeps every split it took, and fails
// every apply while broken.
type stepActuator struct {
	mu     sync.Mutex
	broken bool
	took   []map[string]int // chat's weights, at each successful apply that changed them
	last   actuators.Splits
}

func (f *stepActuator) Name() string { return "steps" }
func (f *stepActuator) Apply(_ context.Context, d actuators.Splits) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.broken {
		return errors.New("backend unreachable")
	}
	if w := d["chat"].Weights; len(f.took) == 0 || !maps.Equal(f.took[len(f.took)-1], w) {
		f.took = append(f.took, maps.Clone(w))
	}
	f.last = d
	return nil
}
func (f *stepActuator) Current(context.Context) (actuators.Splits, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last, nil
}

// TestRecoveredBackendGetsSteps: max_shift_per_tick 20, free shed (its
// target 50 %) while the backend fails every apply. The plan used to go
// on stepping (80, 60, 50) without it, and the backend, once back, got
// free 100 → 50 in one write. The plan now steps from what the backend
// took, so every write moves at most 20 points.
func TestRecoveredBackendGetsSteps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		cfg := strings.Replace(string(rules.DefaultYAML), "actuators: []", "actuators:\n  - type: steps\n    max_shift_per_tick: 20", 1)
		cfgPath := filepath.Join(dir, "hermes.yaml")
		if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		backend := &stepActuator{}
		kinds := &actuators.Registry{}
		kinds.Register("steps", func(actuators.Settings) (actuators.Actuator, error) { return backend, nil })
		fp := &fakeProm{soft: 0.02}
		r, err := New(Options{ConfigPath: cfgPath, Registerer: prometheus.NewRegistry(), Actuators: kinds,
			NewQuery: func(*config.Config, *slog.Logger) (promapi.QueryFunc, error) { return fp.query, nil }})
		if err != nil {
			t.Fatal(err)
		}
		stop := start(t, r)
		time.Sleep(20 * time.Second)
		synctest.Wait()
		backend.mu.Lock()
		backend.broken = true
		backend.mu.Unlock()
		fp.mu.Lock()
		fp.soft = 0.15 // shed: free's target is 50 %
		fp.mu.Unlock()
		time.Sleep(3 * time.Minute)
		synctest.Wait()
		backend.mu.Lock()
		backend.broken = false
		backend.mu.Unlock()
		time.Sleep(2 * time.Minute)
		synctest.Wait()
		stop()
		backend.mu.Lock()
		defer backend.mu.Unlock()
		if n := len(backend.took); n < 2 || backend.took[0]["free"] != 100 || backend.took[n-1]["free"] != 50 {
			t.Fatalf("setup: the backend took %v, want free 100 first and 50 in the end", backend.took)
		}
		for i := 1; i < len(backend.took); i++ {
			if d := backend.took[i-1]["free"] - backend.took[i]["free"]; d > 20 {
				t.Errorf("one write moved %d points (free %d → %d; all: %v), more than max_shift_per_tick 20",
					d, backend.took[i-1]["free"], backend.took[i]["free"], backend.took)
			}
		}
	})
}
