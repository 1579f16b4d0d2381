package backtest_test

import (
	"github.com/hermes-failover/hermes/internal/testenv"

	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/promapi"
	"github.com/hermes-failover/hermes/traffic"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the scenarios' golden timelines")

const scenarioDir = "../testdata/scenarios"

// runScenario backtests a scenario file through the default policy.
func runScenario(t *testing.T, name string, opts backtest.Options) *backtest.Timeline {
	t.Helper()
	return backtestVia(t, name, opts, nil)
}

// backtestVia is runScenario with the scenario's queries passed through wrap
// (fault injection), when set.
func backtestVia(t *testing.T, name string, opts backtest.Options, wrap func(promapi.QueryFunc) promapi.QueryFunc) *backtest.Timeline {
	t.Helper()
	pol := testenv.DefaultPolicy(t)
	bt, err := backtest.OpenFile(filepath.Join(scenarioDir, name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer bt.Close()
	if wrap == nil {
		tl, err := backtest.RunStore(context.Background(), pol, bt, nil, opts)
		if err != nil {
			t.Fatal(err)
		}
		return tl
	}
	step := pol.Config.Global.EvaluationInterval
	w := backtest.NewWindowed(bt, pol.Queries(), bt.Start(), bt.End(), step, backtest.DefaultWindow)
	tl, err := backtest.Run(context.Background(), pol, wrap(w.Query), bt.Start(), bt.End(), opts)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

// golden compares the text timeline with testdata/scenarios/NAME.golden.txt.
func golden(t *testing.T, name string, tl *backtest.Timeline) {
	t.Helper()
	var b bytes.Buffer
	if err := tl.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(scenarioDir, name+".golden.txt")
	if *rewrite {
		if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./backtest -rewrite and review the diff)", err)
	}
	if !bytes.Equal(want, b.Bytes()) {
		t.Errorf("timeline of %s differs from %s (run with -rewrite and review the diff):\n%s", name, path, b.String())
	}
}

func at(d time.Duration) time.Time { return time.Unix(0, 0).UTC().Add(d) }

// weightsAt is each service's split in force at time ts, from traffic events.
func weightsAt(tl *backtest.Timeline, service string, ts time.Time) map[string]int {
	var w map[string]int
	for _, e := range tl.Events {
		if e.Type == evaluator.EventTraffic && e.Service == service && !e.Time.After(ts) {
			w = e.Weights
		}
	}
	return w
}

func events(tl *backtest.Timeline, typ, route string) []evaluator.Event {
	var out []evaluator.Event
	for _, e := range tl.Events {
		if e.Type == typ && (route == "" || e.Route == route) {
			out = append(out, e)
		}
	}
	return out
}

func firing(tl *backtest.Timeline, tier string) []evaluator.Event {
	var out []evaluator.Event
	for _, e := range events(tl, evaluator.EventAlert, "") {
		if e.State == "firing" && (tier == "" || e.Tier == tier) {
			out = append(out, e)
		}
	}
	return out
}

func levelOf(s string) traffic.Level {
	l, _ := traffic.ParseLevel(s)
	return l
}

// assertNoFlapping checks that no route reverses direction faster than the
// default policy allows: an up-move at least 5m (cooldown) after the change
// before it, a down-move at least 1m (dwell) after an up-move.
func assertNoFlapping(t *testing.T, tl *backtest.Timeline) {
	t.Helper()
	last := map[string]evaluator.Event{}
	for _, e := range events(tl, evaluator.EventLevel, "") {
		prev, ok := last[e.Route]
		last[e.Route] = e
		if !ok {
			continue
		}
		gap := e.Time.Sub(prev.Time)
		up := levelOf(e.To) < levelOf(e.From)
		prevUp := levelOf(prev.To) < levelOf(prev.From)
		if up && gap < 5*time.Minute {
			t.Errorf("%s: up-move %s→%s at %s only %s after %s→%s", e.Route, e.From, e.To, e.Time.Format(time.TimeOnly), gap, prev.From, prev.To)
		}
		if !up && prevUp && gap < time.Minute {
			t.Errorf("%s: down-move %s→%s at %s only %s after an up-move", e.Route, e.From, e.To, e.Time.Format(time.TimeOnly), gap)
		}
	}
}

func completedFailbacks(tl *backtest.Timeline, route string) []time.Time {
	var out []time.Time
	for _, e := range events(tl, evaluator.EventLevel, route) {
		if e.From == "failover" && e.To == "normal" {
			out = append(out, e.Time)
		}
	}
	return out
}

func TestScenarioHealthy(t *testing.T) {
	tl := runScenario(t, "healthy", backtest.Options{})
	golden(t, "healthy", tl)
	if lv := events(tl, evaluator.EventLevel, ""); len(lv) != 0 {
		t.Errorf("healthy traffic changed levels: %+v", lv[0])
	}
	if a := append(firing(tl, "A"), firing(tl, "B")...); len(a) != 0 {
		t.Errorf("healthy traffic fired %d A/B alerts, first %s on %s at %s", len(a), a[0].Name, a[0].Route, a[0].Time)
	}
	if tr := events(tl, evaluator.EventTraffic, ""); len(tr) != 1 {
		t.Errorf("want only the initial traffic event, got %d", len(tr))
	}
}

func TestScenarioContentFailure(t *testing.T) {
	tl := runScenario(t, "content_failure", backtest.Options{})
	golden(t, "content_failure", tl)
	lv := events(tl, evaluator.EventLevel, "free")
	if len(lv) == 0 {
		t.Fatal("free never left normal")
	}
	// Soft-fail = 2 % + 38 % × (t-60m)/20m: it reaches 15 % at 66m50s and 30 % at 74m44s.
	if first := lv[0]; first.From != "normal" || first.Time.After(at(66*time.Minute+50*time.Second)) {
		t.Errorf("free left normal at %s (%s→%s); want before the ratio reaches 15 %% (01:06:50)", first.Time.Format(time.TimeOnly), first.From, first.To)
	}
	dwell := 2 * time.Minute
	for ts := at(74*time.Minute + 45*time.Second + dwell); !ts.After(tl.End); ts = ts.Add(tl.Step) {
		if w := weightsAt(tl, "chat", ts)["free"]; w != 0 {
			t.Fatalf("free has %d%% at %s while its soft-fail ratio is ≥ 30 %%", w, ts.Format(time.TimeOnly))
		}
	}
	if len(firing(tl, "A")) == 0 {
		t.Error("no A alert fired")
	}
	assertNoFlapping(t, tl)
}

func TestScenarioHardOutage(t *testing.T) {
	tl := runScenario(t, "hard_outage", backtest.Options{})
	golden(t, "hard_outage", tl)
	// The first HTTP 500s are in the sample at 1h; failover within 2 ticks.
	if w := weightsAt(tl, "chat", at(time.Hour+2*15*time.Second))["free"]; w != 0 {
		t.Errorf("free still has %d%% two ticks after the outage shows", w)
	}
	if w := weightsAt(tl, "chat", at(time.Hour-15*time.Second))["free"]; w != 100 {
		t.Errorf("free had %d%% before the outage", w)
	}
	assertNoFlapping(t, tl)
}

func TestScenarioLatencyOnly(t *testing.T) {
	tl := runScenario(t, "latency_only", backtest.Options{})
	golden(t, "latency_only", tl)
	for _, e := range events(tl, evaluator.EventLevel, "free") {
		if levelOf(e.To) > traffic.Shed {
			t.Errorf("latency alone moved free to %s at %s", e.To, e.Time.Format(time.TimeOnly))
		}
	}
	var b bool
	for _, e := range firing(tl, "B") {
		b = b || e.Route == "free"
	}
	if !b {
		t.Error("no B alert for free")
	}
	if len(firing(tl, "A")) != 0 {
		t.Errorf("latency alone paged: %+v", firing(tl, "A")[0])
	}
	assertNoFlapping(t, tl)
}

func TestScenarioQuotaDrain(t *testing.T) {
	tl := runScenario(t, "quota_drain", backtest.Options{})
	golden(t, "quota_drain", tl)
	// Quota = 50 % - 50 % × t/4h reaches 2 % at 3h50m24s.
	if w := weightsAt(tl, "chat", at(3*time.Hour+50*time.Minute))["free"]; w >= 100 {
		t.Errorf("free still has %d%% just before its quota reaches 2 %%", w)
	}
	assertNoFlapping(t, tl)
}

func TestScenarioFalseRecovery(t *testing.T) {
	tl := runScenario(t, "false_recovery", backtest.Options{})
	golden(t, "false_recovery", tl)
	// The free route fails from 1h to 1h25m and again from 1h50m to
	// 2h10m. Its 25-minute recovery in between is too short for its
	// probes to rule the failure out (an end-to-end result every 2m): a
	// failback may not start on it, and one that does steps back once
	// the failure returns. Either way free carries no traffic a minute
	// into the second failure, nor any time until it ends.
	for d := 111 * time.Minute; d < 130*time.Minute; d += time.Minute {
		if w := weightsAt(tl, "chat", at(d))["free"]; w != 0 {
			t.Errorf("free carries %d%% at %s, during the failure after the false recovery", w, d)
			break
		}
	}
	if n := len(completedFailbacks(tl, "free")); n > 1 {
		t.Errorf("%d completed failbacks in 5h, want at most 1", n)
	}
	assertNoFlapping(t, tl)
}

func TestScenarioMetricsVanish(t *testing.T) {
	tl := runScenario(t, "metrics_vanish", backtest.Options{})
	golden(t, "metrics_vanish", tl)
	if tr := events(tl, evaluator.EventTraffic, ""); len(tr) != 1 {
		t.Errorf("traffic changed while metrics vanished: %d traffic events", len(tr))
	}
	if lv := events(tl, evaluator.EventLevel, ""); len(lv) != 0 {
		t.Errorf("levels changed: %+v", lv[0])
	}
	var blind bool
	for _, e := range firing(tl, "") {
		blind = blind || e.Name == "HermesSignalMissing"
	}
	if !blind {
		t.Error("no blind-spot alert while metrics were missing")
	}
}

func TestScenarioManual(t *testing.T) {
	tl := runScenario(t, "manual", backtest.Options{})
	golden(t, "manual", tl)
	var manualAt time.Time
	for _, e := range events(tl, evaluator.EventLevel, "free") {
		if e.To == "manual" {
			manualAt = e.Time
		}
	}
	if manualAt.IsZero() {
		t.Fatal("free never went to manual")
	}
	// The route is healthy again from 1h50; it stays failed over until released.
	for ts := manualAt; !ts.After(tl.End); ts = ts.Add(tl.Step) {
		if w := weightsAt(tl, "chat", ts)["free"]; w != 0 {
			t.Fatalf("free got %d%% at %s without a release", w, ts.Format(time.TimeOnly))
		}
	}
	if tl.Final.Routes["free"].Level != traffic.Manual {
		t.Errorf("free ends %s, want manual", tl.Final.Routes["free"].Level)
	}

	released := runScenario(t, "manual", backtest.Options{Releases: []backtest.Release{{Route: "free", At: at(150 * time.Minute), Reason: "test"}}})
	if w := weightsAt(released, "chat", released.End)["free"]; w != 100 {
		t.Errorf("after a release at 2h30 free ends with %d%%, want 100 (staged failback)", w)
	}
	assertNoFlapping(t, released)
}

func TestScenarioThreeDegradations(t *testing.T) {
	tl := runScenario(t, "three_degradations", backtest.Options{})
	golden(t, "three_degradations", tl)
	if n := len(completedFailbacks(tl, "free")); n != 1 {
		t.Errorf("%d completed failbacks in 10h, want exactly 1 (the budget is one per 24h)", n)
	}
	assertNoFlapping(t, tl)
}

func TestScenarioCascade(t *testing.T) {
	tl := runScenario(t, "cascade", backtest.Options{})
	golden(t, "cascade", tl)
	w := weightsAt(tl, "chat", at(2*time.Hour))
	if w["paid-premium"] != 100 {
		t.Errorf("at 2h the split is %v; want everything on paid-premium", w)
	}
	assertNoFlapping(t, tl)
}
