package runner

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/actuators/actuatortest"
	"github.com/hermes-failover/hermes/actuators/file"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/promapi"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/runner/auditlog"
)

// fakeProm answers signal queries from per-signal values for the route
// "free" and healthy values for the others; it records query timestamps.
type fakeProm struct {
	mu      sync.Mutex
	soft    float64
	hard    float64
	fail    error
	delay   time.Duration
	queries []time.Time
}

func (f *fakeProm) query(ctx context.Context, q string, t time.Time) (model.Vector, error) {
	f.mu.Lock()
	soft, hard, fail, delay := f.soft, f.hard, f.fail, f.delay
	if !strings.Contains(q, "hermes_") {
		f.queries = append(f.queries, t)
	}
	f.mu.Unlock()
	if delay > 0 && !strings.Contains(q, "hermes_") {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if fail != nil {
		return nil, fail
	}
	if strings.Contains(q, "hermes_") {
		return model.Vector{}, nil // nothing to restore
	}
	return promapi.ByPart(func(_ context.Context, q string, t time.Time) (model.Vector, error) {
		return fakeAnswer(q, t, soft, hard), nil
	})(ctx, q, t)
}

// tickFor lets d pass in the synctest bubble and waits until the ticks
// in it are done.
func tickFor(d time.Duration) {
	time.Sleep(d)
	synctest.Wait()
}

// setFail makes every query of f fail with err; nil: they answer again.
func (f *fakeProm) setFail(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.fail = err
}

// setSoft sets free's soft failure ratio.
func (f *fakeProm) setSoft(v float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.soft = v
}

// fakeAnswer is fakeProm's answer to one signal or evidence query.
func fakeAnswer(q string, t time.Time, soft, hard float64) model.Vector {
	var v model.Vector
	for _, r := range []string{"free", "paid-standard", "paid-premium"} {
		val := 0.0
		switch {
		case strings.Contains(q, "increase("):
			val = 20 * increaseWindow(q).Seconds() // the calls or samples behind a ratio: 20 req/s
		case strings.Contains(q, `verdict="soft_fail"}`) && r == "free":
			val = soft
		case strings.Contains(q, `verdict="hard_fail"}`) && r == "free":
			val = hard
		case strings.Contains(q, "llm_probe_results_total"):
			val = 1 // every probe result passes
		case strings.Contains(q, "_ratio") && strings.Contains(q, "histogram_quantile"):
			val = 1
		case strings.Contains(q, "quality"):
			val = 1
		case strings.Contains(q, "quota"):
			val = 0.9
		}
		v = append(v, &model.Sample{Metric: model.Metric{"route": model.LabelValue(r)}, Value: model.SampleValue(val), Timestamp: model.TimeFromUnixNano(t.UnixNano())})
	}
	return v
}

// increaseWindow is the range of q's first increase(): a window of 15m
// holds fifteen times the calls of one of 1m, as it would in Prometheus.
func increaseWindow(q string) time.Duration {
	rest := q[strings.Index(q, "increase("):]
	open, end := strings.IndexByte(rest, '['), strings.IndexByte(rest, ']')
	if open < 0 || end < open {
		return time.Minute
	}
	d, err := model.ParseDuration(rest[open+1 : end])
	if err != nil {
		return time.Minute
	}
	return time.Duration(d)
}

func writeConfig(t *testing.T, dir, splitPath string) string {
	t.Helper()
	cfg := strings.Replace(string(rules.DefaultYAML), "actuators: []", "actuators:\n  - type: file\n    path: "+splitPath, 1)
	path := filepath.Join(dir, "hermes.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// newFileRunner is New on opts filled in as most tests want it: unless
// opts says otherwise, the shipped policy with a file actuator writing
// dir/split.json (writeConfig), a registry of its own, the file actuator
// kind, and fp for Prometheus. It returns the runner and the split's path.
func newFileRunner(t *testing.T, fp *fakeProm, dir string, opts Options) (*Runner, string) {
	t.Helper()
	split := filepath.Join(dir, "split.json")
	if opts.ConfigPath == "" {
		opts.ConfigPath = writeConfig(t, dir, split)
	}
	if opts.Registerer == nil {
		opts.Registerer = prometheus.NewRegistry()
	}
	if opts.Actuators == nil {
		kinds := &actuators.Registry{}
		file.Register(kinds)
		opts.Actuators = kinds
	}
	if opts.NewQuery == nil {
		opts.NewQuery = func(*config.Config, *slog.Logger) (promapi.QueryFunc, error) { return fp.query, nil }
	}
	r, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return r, split
}

func newTestRunner(t *testing.T, fp *fakeProm) (*Runner, *prometheus.Registry, string, string) {
	t.Helper()
	dir := t.TempDir()
	cfgPath := writeConfig(t, dir, filepath.Join(dir, "split.json"))
	reg := prometheus.NewRegistry()
	r, split := newFileRunner(t, fp, dir, Options{ConfigPath: cfgPath, Registerer: reg})
	return r, reg, cfgPath, split
}

// startTestRunner is newTestRunner's runner, started (start): it returns
// the runner, its registry, the split's path and stop.
func startTestRunner(t *testing.T, fp *fakeProm) (*Runner, *prometheus.Registry, string, func()) {
	t.Helper()
	r, reg, _, split := newTestRunner(t, fp)
	return r, reg, split, start(t, r)
}

func weights(t *testing.T, split string) map[string]int {
	t.Helper()
	a, err := file.New(actuatortest.Settings(file.Kind, map[string]any{"path": split}))
	if err != nil {
		t.Fatal(err)
	}
	d, err := a.Current(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return d["chat"].Weights
}

func TestTicksAreAlignedAndShiftTraffic(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.02}
		r, reg, _, split := newTestRunner(t, fp)
		time.Sleep(7 * time.Second) // start off the interval grid
		stop := start(t, r)
		tickFor(20 * time.Second)
		if !r.Ready() {
			t.Fatal("not ready after the first tick")
		}
		if w := weights(t, split); w["free"] != 100 {
			t.Fatalf("healthy split %v", w)
		}
		fp.mu.Lock()
		fp.soft = 0.5
		for _, q := range fp.queries {
			if q.UnixNano()%int64(15*time.Second) != 0 {
				t.Errorf("query at %s is not aligned to the 15s interval", q)
			}
		}
		fp.mu.Unlock()
		tickFor(5 * time.Minute)
		if w := weights(t, split); w["free"] != 0 || w["paid-standard"] != 100 {
			t.Fatalf("split after a content failure: %v", w)
		}
		if got := metricValue(t, reg, "hermes_ticks_total"); got < 20 {
			t.Errorf("ticks_total %v", got)
		}
		stop()
	})
}

func TestPrometheusDownHoldsTheSplit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.5}
		r, _, split, stop := startTestRunner(t, fp)
		tickFor(5 * time.Minute)
		before := weights(t, split)
		if before["free"] != 0 {
			t.Fatalf("setup: free not failed over: %v", before)
		}
		fp.setFail(errors.New("connection refused"))
		fp.setSoft(0.02)
		tickFor(30 * time.Minute)
		if after := weights(t, split); after["free"] != 0 || after["paid-standard"] != 100 {
			t.Fatalf("split moved while Prometheus was down: %v", after)
		}
		st := status(r)
		if st.Services[0].Routes[0].Level != "failover" {
			t.Errorf("free is %s, want failover held", st.Services[0].Routes[0].Level)
		}
		stop()
	})
}

// TestNotReadyUntilATickHadData: ticks whose every query failed leave
// Hermes not ready (the status says it ticked); the first tick with data
// makes it ready.
func TestNotReadyUntilATickHadData(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.02, fail: errors.New("connection refused")}
		r, _, _, stop := startTestRunner(t, fp)
		tickFor(time.Minute)
		st := status(r)
		if r.Ready() || st.Ready || !st.Ticked || st.LastTick.IsZero() {
			t.Fatalf("Prometheus down: Ready() %v, status ready %v ticked %v last tick %s; want ticked, not ready", r.Ready(), st.Ready, st.Ticked, st.LastTick)
		}
		fp.setFail(nil)
		tickFor(time.Minute)
		if st := status(r); !r.Ready() || !st.Ready {
			t.Fatalf("Prometheus back: Ready() %v, status ready %v", r.Ready(), st.Ready)
		}
		stop()
	})
}

func TestOverrunSkipsTicks(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.02, delay: 40 * time.Second} // far beyond query_timeout: every query times out
		r, reg, _, _ := newTestRunner(t, fp)
		r.cfg.Global.QueryTimeout = time.Minute // let the tick overrun on purpose
		stop := start(t, r)
		tickFor(3 * time.Minute)
		if skipped := metricValue(t, reg, "hermes_ticks_skipped_total"); skipped < 1 {
			t.Errorf("ticks_skipped_total = %v, want overruns counted", skipped)
		}
		stop()
	})
}

func TestInvalidReloadKeepsTheOldConfig(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.02}
		r, reg, cfgPath, split := newTestRunner(t, fp)
		stop := start(t, r)
		tickFor(time.Minute)
		old := status(r).LoadedAt
		if err := os.WriteFile(cfgPath, []byte("global:\n  evaluation_interval: nope\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		err := r.Reload(t.Context())
		if err == nil || !strings.Contains(err.Error(), "evaluation_interval") {
			t.Fatalf("reload of an invalid config: %v", err)
		}
		if got := metricValue(t, reg, "hermes_config_last_reload_successful"); got != 0 {
			t.Errorf("config_last_reload_successful = %v after a rejected reload", got)
		}
		tickFor(time.Minute)
		st := status(r)
		if !st.LoadedAt.Equal(old) || st.LastTick.Before(old.Add(time.Minute)) {
			t.Errorf("the old config should keep ticking: loaded %s last tick %s", st.LoadedAt, st.LastTick)
		}
		if w := weights(t, split); w["free"] != 100 {
			t.Errorf("split changed: %v", w)
		}
		stop()
	})
}

// metricValue reads one unlabelled counter or gauge from reg.
func metricValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name || len(mf.GetMetric()) == 0 {
			continue
		}
		m := mf.GetMetric()[0]
		if c := m.GetCounter(); c != nil {
			return c.GetValue()
		}
		return m.GetGauge().GetValue()
	}
	t.Fatalf("metric %s not found", name)
	return 0
}

// flakyActuator fails while broken and records what it was last given.
type flakyActuator struct {
	mu     sync.Mutex
	broken bool
	last   actuators.Splits
	calls  int
}

func (f *flakyActuator) Name() string { return "flaky" }
func (f *flakyActuator) Apply(_ context.Context, d actuators.Splits) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls++
	if f.broken {
		return errors.New("backend unreachable")
	}
	f.last = d
	return nil
}
func (f *flakyActuator) Current(context.Context) (actuators.Splits, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.last, nil
}

// lastSplits is what a was last given.
func (a *flakyActuator) lastSplits() actuators.Splits {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.last
}

// actuatorAlertName is the shipped policy's alert on a failing actuator.
const actuatorAlertName = "HermesActuatorFailing"

func TestFailedActuationIsRetriedAndAlerts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.02}
		flaky := &flakyActuator{broken: true}
		r, reg := newFlakyRunner(t, fp, flaky)
		stop := start(t, r)
		tickFor(30 * time.Second)
		for _, a := range status(r).Alerts {
			if a.Name == actuatorAlertName {
				t.Errorf("actuator alert after a couple of failed ticks: %+v", a)
			}
		}
		fp.setSoft(0.5) // decide a failover while the backend is down
		tickFor(5 * time.Minute)
		var firing bool
		for _, a := range status(r).Alerts {
			firing = firing || (a.Name == actuatorAlertName && a.Tier == "A" && a.State == "firing")
		}
		if !firing {
			t.Fatalf("no %s alert after minutes of failures: %+v", actuatorAlertName, status(r).Alerts)
		}
		if got := status(r).Services[0].Weights["free"]; got != 0 {
			t.Fatalf("the decision should stand despite the failing actuator: free=%d", got)
		}
		flaky.mu.Lock()
		flaky.broken = false
		flaky.mu.Unlock()
		tickFor(time.Minute)
		applied := flaky.lastSplits()["chat"].Weights
		if applied["free"] != 0 || applied["paid-standard"] != 100 {
			t.Errorf("after the backend recovered it got %v; the failover must not be forgotten", applied)
		}
		for _, a := range status(r).Alerts {
			if a.Name == actuatorAlertName {
				t.Errorf("alert still %s after recovery", a.State)
			}
		}
		if v := testenv.Metric(t, reg, "hermes_actuations_total", map[string]string{"actuator": "flaky", "result": "error"}); v < 10 {
			t.Errorf("errors counted: %v", v)
		}
		stop()
	})
}

func TestOverridesSurviveARestart(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.02}
		r, _, cfgPath, split := newTestRunner(t, fp)
		stop := start(t, r)
		tickFor(20 * time.Second)
		if _, err := r.Submit(context.Background(), evaluator.Command{Kind: evaluator.CommandPin, Service: "chat", Route: "paid-premium", Reason: "launch day", By: "alice"}); err != nil {
			t.Fatal(err)
		}
		if _, err := r.Submit(context.Background(), evaluator.Command{Kind: evaluator.CommandPin, Service: "chat", Route: "nowhere", Reason: "typo"}); err == nil {
			t.Error("a pin to an unknown route was accepted")
		}
		tickFor(20 * time.Second)
		if w := weights(t, split); w["paid-premium"] != 100 {
			t.Fatalf("pinned split %v", w)
		}
		stop()

		// A new process: the pin comes back from the overrides file.
		r2, _ := newFileRunner(t, fp, t.TempDir(), Options{ConfigPath: cfgPath})
		stop2 := start(t, r2)
		tickFor(20 * time.Second)
		st := status(r2)
		if o := st.Services[0].Override; o == nil || o.Kind != "pin" || o.Route != "paid-premium" || o.By != "alice" {
			t.Errorf("override after restart: %+v", o)
		}
		if w := weights(t, split); w["paid-premium"] != 100 {
			t.Errorf("split after restart %v", w)
		}
		if _, err := r2.Submit(context.Background(), evaluator.Command{Kind: evaluator.CommandClear, Service: "chat", Reason: "launch over", By: "bob"}); err != nil {
			t.Fatal(err)
		}
		tickFor(20 * time.Second)
		if w := weights(t, split); w["free"] != 100 {
			t.Errorf("split after clearing the pin %v", w)
		}
		stop2()
	})
}

func TestRestoreFromActuatorKeepsManual(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.02} // healthy now, but nothing about Hermes in Prometheus
		r, split := newRunnerWithManualFree(t, fp)
		stop := start(t, r)
		tickFor(time.Hour) // long enough for any automatic failback
		if lvl := status(r).Services[0].Routes[0].Level; lvl != "manual" {
			t.Errorf("free restored as %s, want manual (it was recorded manual)", lvl)
		}
		if w := weights(t, split); w["free"] != 0 {
			t.Errorf("free got traffic back without a release: %v", w)
		}
		stop()
	})
}

// start runs r in the background; the returned stop (also run at cleanup,
// so a failed test leaves no goroutine in the bubble) cancels it and waits
// for Run to return.
func start(t *testing.T, r *Runner) (stop func()) {
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	var once sync.Once
	stop = func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Error(err)
			}
		})
	}
	t.Cleanup(stop)
	return stop
}

func TestRateLimitedStepsAreAudited(t *testing.T) {
	for _, c := range []struct {
		name      string
		fp        *fakeProm
		wantHolds bool
	}{
		{"shed is limited", &fakeProm{soft: 0.15}, true},               // ≥ 12 % of 1 200 calls at 99.9 %, 15 % shown: score 70, shed, 50 points to move
		{"a failed route drains at once", &fakeProm{hard: 0.9}, false}, // hard outage: failover
	} {
		t.Run(c.name, func(t *testing.T) { testRateLimit(t, c.fp, c.wantHolds) })
	}
}

func testRateLimit(t *testing.T, fp *fakeProm, wantHolds bool) {
	synctest.Test(t, func(t *testing.T) {
		dir := t.TempDir()
		split := filepath.Join(dir, "split.json")
		cfg := strings.Replace(string(rules.DefaultYAML), "actuators: []", "actuators:\n  - type: file\n    path: "+split+"\n    max_shift_per_tick: 40", 1)
		cfgPath := filepath.Join(dir, "hermes.yaml")
		if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		audit := &testenv.Buffer{}
		r, _ := newFileRunner(t, fp, dir, Options{ConfigPath: cfgPath, Audit: auditlog.New(audit)})
		// Start from a healthy split on disk, so the limiter has a base.
		healthy := `{"services":{"chat":{"weights":{"free":100,"paid-standard":0,"paid-premium":0},"retries_enabled":true,"degraded_mode":false}}}`
		if err := os.WriteFile(split, []byte(healthy), 0o644); err != nil {
			t.Fatal(err)
		}
		start(t, r)
		tickFor(3 * time.Minute)
		want := map[string]int{"free": 50, "paid-standard": 50}
		if !wantHolds {
			want = map[string]int{"free": 0, "paid-standard": 100}
		}
		if w := weights(t, split); w["free"] != want["free"] || w["paid-standard"] != want["paid-standard"] {
			t.Fatalf("split %v, want %v in the end", w, want)
		}
		got := audit.String()
		// The core plans the step (evaluator's shift.go): the audit records
		// it as the tick's traffic decision and as what the actuator wrote.
		step := `"weights":{"free":60,"paid-premium":0,"paid-standard":40}`
		times := 0
		if wantHolds {
			times = 2
		}
		if n := strings.Count(got, step); n != times {
			t.Errorf("audit records the limited step %d times, want %d (traffic and actuation):\n%s", n, times, got)
		}
		if strings.Contains(got, `"holds":`) {
			t.Errorf("the backend holds other than the plan:\n%s", got)
		}
	})
}
