package telemetry

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/traffic"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/ticks.txt from this implementation's scrapes")

// ticksPolicy is a small policy of three signals, four routes (one in two
// services) and two services; without is the same with the signal
// p99_ratio, the route paid-premium and the service batch removed,
// paid-standard moved from chat to a new service assistant and batch-cheap
// moved to chat.
const ticksPolicy = `
global: {evaluation_interval: 15s, query_timeout: 5s}
prometheus: {url: "http://127.0.0.1:9090"}
signals:
  - name: hard_fail_ratio
    query: sum by (route) (rate(llm_gateway_requests_total{verdict="hard_fail"}[1m]))
%s  - name: probe_success
    query: min by (route) (llm_probe_success)
scoring:
  penalties:
    - {signal: hard_fail_ratio, above: 0, points_per_unit: 100, max: 100}
%slevels:
  - {name: warm, below: 85, recover_above: 90, dwell: 1m, primary_percent: 95, retries: true}
  - {name: shed, below: 75, recover_above: 82, dwell: 1m, primary_percent: 50, retries: true}
  - {name: failover, below: 60, recover_above: 80, dwell: 2m, primary_percent: 0}
failback: {stages: [50, 100], observe: 5m, min_score: 80, max_completed: 1, window: 1d, manual_after: 1h}
services:
%s`

func ticksPolicies(t *testing.T) (full, without *evaluator.Policy) {
	const p99 = "  - name: p99_ratio\n    query: max by (route) (llm_gateway_p99_ratio)\n"
	const p99Penalty = "    - {signal: p99_ratio, above: 1.5, points_per_unit: 20, max: 40}\n"
	full = testenv.Policy(t, fmt.Sprintf(ticksPolicy, p99, p99Penalty,
		"  - {name: chat, routes: [free, paid-standard, paid-premium]}\n  - {name: batch, routes: [batch-cheap, paid-standard]}\n"))
	without = testenv.Policy(t, fmt.Sprintf(ticksPolicy, "", "",
		"  - {name: assistant, routes: [paid-standard, free]}\n  - {name: chat, routes: [free, batch-cheap]}\n"))
	return full, without
}

// ticksStep is one tick of TestUpdateTicks: the policy, the state Step
// would have returned and the snapshot, or a restart (a new Metrics on a
// new registry) before it.
type ticksStep struct {
	what    string
	pol     *evaluator.Policy
	restart bool
	state   evaluator.State
	snap    evaluator.Snapshot
}

// ticksNight is the scenario of TestUpdateTicks, tick by tick from t0.
func ticksNight(t *testing.T) []ticksStep {
	full, without := ticksPolicies(t)
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * 15 * time.Second) }
	calm := func(since time.Time) *evaluator.RouteState {
		return &evaluator.RouteState{SavedRoute: evaluator.SavedRoute{Since: since}, Score: evaluator.Score{Value: 100}}
	}
	// contributions are penalties in the policy's signal order, as Step
	// makes them.
	contributions := func(pol *evaluator.Policy, penalties map[string]float64) []evaluator.Contribution {
		var out []evaluator.Contribution
		for _, sig := range pol.Config.Signals {
			out = append(out, evaluator.Contribution{Signal: sig.Name, Penalty: penalties[sig.Name]})
		}
		return out
	}
	// snapshot is every signal of every route of pol healthy, changed by
	// set (route → signal → sample).
	snapshot := func(pol *evaluator.Policy, now time.Time, set map[string]map[string]evaluator.Sample) evaluator.Snapshot {
		names := make([]string, len(pol.Config.Signals))
		for j, sig := range pol.Config.Signals {
			names[j] = sig.Name
		}
		s := evaluator.NewSnapshot(now, pol.Routes(), names)
		healthy := map[string]float64{"hard_fail_ratio": 0.001, "p99_ratio": 1.1, "probe_success": 1}
		for i := range pol.Routes() {
			for j, sig := range names {
				s.SetCell(i, j, evaluator.Sample{Value: healthy[sig]})
			}
		}
		for r, sigs := range set {
			for sig, smp := range sigs {
				s.Set(r, sig, smp)
			}
		}
		return s
	}
	missing := evaluator.Sample{Value: math.NaN(), Status: evaluator.StatusMissing, Reason: "no data"}
	queryError := func(reason string) evaluator.Sample {
		return evaluator.Sample{Value: math.NaN(), Status: evaluator.StatusError, Reason: reason}
	}
	split := func(weights map[string]int, retries, degraded bool) *traffic.Split {
		return &traffic.Split{Weights: weights, RetriesEnabled: retries, Degraded: degraded}
	}
	alert := func(state evaluator.AlertState, activeAt time.Time) map[string]*evaluator.Alert {
		a := &evaluator.Alert{Rule: "HermesRouteScoreCritical", Tier: "A", Service: "chat", Route: "free", State: state, ActiveAt: activeAt}
		return map[string]*evaluator.Alert{a.Key(): a}
	}
	before := t0.Add(-time.Hour)

	var steps []ticksStep
	add := func(s ticksStep) { steps = append(steps, s) }

	add(ticksStep{what: "every route calm", pol: full,
		state: evaluator.State{
			Routes: map[string]*evaluator.RouteState{"free": calm(before), "paid-standard": calm(before), "paid-premium": calm(before), "batch-cheap": calm(before)},
			Services: map[string]*traffic.Split{
				"chat":  split(map[string]int{"free": 100}, true, false),
				"batch": split(map[string]int{"batch-cheap": 100}, true, false),
			}},
		snap: snapshot(full, at(0), nil)})

	free := &evaluator.RouteState{SavedRoute: evaluator.SavedRoute{Level: traffic.Warm, Since: at(1)},
		Score: evaluator.Score{Value: 80, Contributions: contributions(full, map[string]float64{"hard_fail_ratio": 20})}}
	premiumHeld := &evaluator.RouteState{SavedRoute: evaluator.SavedRoute{Since: before},
		Score: evaluator.Score{Value: 100, Missing: []string{"probe_success"},
			Contributions: []evaluator.Contribution{{Signal: "probe_success", Status: evaluator.StatusMissing}}}}
	add(ticksStep{what: "free loses points and goes warm; paid-premium's probe goes missing and holds it", pol: full,
		state: evaluator.State{
			Routes: map[string]*evaluator.RouteState{"free": free, "paid-standard": calm(before), "paid-premium": premiumHeld, "batch-cheap": calm(before)},
			Services: map[string]*traffic.Split{
				"chat":  split(map[string]int{"free": 95, "paid-standard": 5}, true, false),
				"batch": split(map[string]int{"batch-cheap": 100}, true, false),
			}},
		snap: snapshot(full, at(1), map[string]map[string]evaluator.Sample{
			"free": {"hard_fail_ratio": {Value: 0.2}}, "paid-premium": {"probe_success": missing}})})

	timeouts := map[string]map[string]evaluator.Sample{
		"free": {"hard_fail_ratio": {Value: 0.6}}, "paid-premium": {"probe_success": missing}, "batch-cheap": {"hard_fail_ratio": {Value: 0.3}}}
	for _, r := range full.Routes() {
		if timeouts[r] == nil {
			timeouts[r] = map[string]evaluator.Sample{}
		}
		timeouts[r]["p99_ratio"] = queryError("timeout")
	}
	timeouts["paid-standard"]["p99_ratio"] = queryError("") // counted as "unknown"
	add(ticksStep{what: "free fails over; p99_ratio's query fails for every route; batch-cheap sheds, batch is degraded; an alert is pending", pol: full,
		state: evaluator.State{
			Routes: map[string]*evaluator.RouteState{
				"free": {SavedRoute: evaluator.SavedRoute{Level: traffic.Failover, Since: at(2), FailingSince: at(2)},
					Score: evaluator.Score{Value: 40, Contributions: contributions(full, map[string]float64{"hard_fail_ratio": 60})}},
				"paid-standard": calm(before), "paid-premium": premiumHeld,
				"batch-cheap": {SavedRoute: evaluator.SavedRoute{Level: traffic.Shed, Since: at(2)},
					Score: evaluator.Score{Value: 70, Contributions: []evaluator.Contribution{ // not in the policy's order
						{Signal: "probe_success"}, {Signal: "p99_ratio", Status: evaluator.StatusError}, {Signal: "hard_fail_ratio", Penalty: 30}}}},
			},
			Services: map[string]*traffic.Split{
				"chat":  split(map[string]int{"paid-standard": 100}, false, false),
				"batch": split(map[string]int{"batch-cheap": 50, "paid-standard": 50}, false, true),
			},
			Alerts: alert(evaluator.StatePending, at(2))},
		snap: snapshot(full, at(2), timeouts)})

	add(ticksStep{what: "free fails back (stage 1); paid-premium is warm at full score; paid-standard and batch have no state; probe_success errs for batch-cheap; the alert fires", pol: full,
		state: evaluator.State{
			Routes: map[string]*evaluator.RouteState{
				"free": {SavedRoute: evaluator.SavedRoute{Level: traffic.Failover, Since: at(2), Stage: 1, StageSince: at(3)},
					Score: evaluator.Score{Value: 85, Contributions: contributions(full, nil)}},
				"paid-premium": {SavedRoute: evaluator.SavedRoute{Level: traffic.Warm, Since: at(3)}, Score: evaluator.Score{Value: 100}},
				"batch-cheap": {SavedRoute: evaluator.SavedRoute{Level: traffic.Shed, Since: at(2)},
					Score: evaluator.Score{Value: 90, Contributions: contributions(full, map[string]float64{"hard_fail_ratio": 10})}},
			},
			Services: map[string]*traffic.Split{"chat": split(map[string]int{"free": 50, "paid-standard": 50}, false, false)},
			Alerts:   alert(evaluator.StateFiring, at(2))},
		snap: snapshot(full, at(3), map[string]map[string]evaluator.Sample{
			"batch-cheap": {"probe_success": queryError("bad_data"), "hard_fail_ratio": {Value: 0.1}}})})

	freeBack := &evaluator.RouteState{SavedRoute: evaluator.SavedRoute{Since: at(4), Failbacks: []time.Time{at(4)}}, Score: evaluator.Score{Value: 100}}
	add(ticksStep{what: "free's failback completes; every route calm again; the alert resolves", pol: full,
		state: evaluator.State{
			Routes: map[string]*evaluator.RouteState{"free": freeBack, "paid-standard": calm(before), "paid-premium": calm(before), "batch-cheap": calm(at(4))},
			Services: map[string]*traffic.Split{
				"chat":  split(map[string]int{"free": 100}, true, false),
				"batch": split(map[string]int{"batch-cheap": 100}, true, false),
			},
			Alerts: alert(evaluator.StateInactive, at(2))},
		snap: snapshot(full, at(4), nil)})

	freeWarm := &evaluator.RouteState{SavedRoute: evaluator.SavedRoute{Level: traffic.Warm, Since: at(5), Failbacks: []time.Time{at(4)}},
		Score: evaluator.Score{Value: 85, Contributions: contributions(without, map[string]float64{"hard_fail_ratio": 15})}}
	add(ticksStep{what: "reload: p99_ratio, paid-premium and batch go, paid-standard leaves chat for assistant, batch-cheap joins chat; free goes warm again", pol: without,
		state: evaluator.State{
			Routes: map[string]*evaluator.RouteState{"free": freeWarm, "paid-standard": calm(before), "batch-cheap": calm(at(4))},
			Services: map[string]*traffic.Split{
				"chat":      split(map[string]int{"free": 95, "batch-cheap": 5}, true, false),
				"assistant": split(map[string]int{"paid-standard": 100}, true, false),
			}},
		snap: snapshot(without, at(5), map[string]map[string]evaluator.Sample{"free": {"hard_fail_ratio": {Value: 0.15}}})})

	backState := func(failbacks []time.Time) evaluator.State {
		return evaluator.State{
			Routes: map[string]*evaluator.RouteState{
				"free": {SavedRoute: evaluator.SavedRoute{Level: traffic.Warm, Since: at(5), Failbacks: failbacks},
					Score: evaluator.Score{Value: 85, Contributions: contributions(full, map[string]float64{"hard_fail_ratio": 15})}},
				"paid-standard": {SavedRoute: evaluator.SavedRoute{Level: traffic.Manual, Since: at(6), FailingSince: at(3), Released: true},
					Score: evaluator.Score{Value: 100}},
				"paid-premium": {SavedRoute: evaluator.SavedRoute{Level: traffic.Failover, Since: at(6), FailingSince: at(6)},
					Score: evaluator.Score{Value: 30, Contributions: contributions(full, map[string]float64{"p99_ratio": 40, "hard_fail_ratio": 30})}},
				"batch-cheap": calm(at(4)),
			},
			Services: map[string]*traffic.Split{
				"chat":  split(map[string]int{"free": 100}, false, false),
				"batch": split(map[string]int{"batch-cheap": 100}, true, false),
			}}
	}
	backSnap := func(now time.Time) evaluator.Snapshot {
		return snapshot(full, now, map[string]map[string]evaluator.Sample{
			"free": {"hard_fail_ratio": {Value: 0.15}}, "paid-premium": {"hard_fail_ratio": {Value: 0.3}, "p99_ratio": {Value: 3.5}}})
	}
	add(ticksStep{what: "reload back: p99_ratio, paid-premium and batch return; paid-premium fails over at once, paid-standard is manual and released", pol: full,
		state: backState([]time.Time{at(4)}), snap: backSnap(at(6))})
	add(ticksStep{what: "restart: the same state read back (its failback at its own time)", pol: full, restart: true,
		state: backState([]time.Time{at(4)}), snap: backSnap(at(7))})

	// batch-cheap has no row in the last snapshot: its signals read "no
	// sample".
	lastSnap := evaluator.Snapshot{Time: at(8)}
	for _, r := range []string{"free", "paid-standard", "paid-premium"} {
		for _, sig := range full.Config.Signals {
			lastSnap.Set(r, sig.Name, evaluator.Sample{Value: 0.5})
		}
	}
	add(ticksStep{what: "every route calm; batch-cheap is missing from the snapshot", pol: full,
		state: evaluator.State{
			Routes: map[string]*evaluator.RouteState{"free": calm(at(8)), "paid-standard": calm(at(8)), "paid-premium": calm(at(8)), "batch-cheap": calm(at(4))},
			Services: map[string]*traffic.Split{
				"chat":  split(map[string]int{"free": 100}, true, false),
				"batch": split(map[string]int{"batch-cheap": 100}, true, false),
			}},
		snap: lastSnap})
	for i := range steps {
		steps[i].snap.Time = at(i)
	}
	return steps
}

// TestUpdateTicks drives Metrics through ticksNight — routes changing
// level, signals failing and erring, a route and a service without state,
// a reload that removes a route, a signal and a service and one that
// brings them back, a restart — with and without Options.AllSignals, and
// compares the whole scrape after every tick (the text exposition without
// HELP lines and the families Update does not write) with
// testdata/ticks.txt. That file was
// recorded from the implementation before Update kept each route's series
// handles: a handle kept after its series was deleted (a Set that no
// longer shows), a deletion skipped or a series left behind by a reload
// shows as a difference. Regenerate with -rewrite and review the diff.
//
// The night is exported a second time as the live loop's stage exports
// it, told whether each tick's snapshot holds an error sample (the
// collector's count, tick.Result.NoErrorSamples): the scrapes must be the
// same bytes.
func TestUpdateTicks(t *testing.T) {
	var got, told bytes.Buffer
	errTicks := 0
	for _, opts := range []Options{{}, {AllSignals: true}} {
		fmt.Fprintf(&got, "## Options %+v\n", opts)
		fmt.Fprintf(&told, "## Options %+v\n", opts)
		var reg, regTold *prometheus.Registry
		var m, mTold *withSaved
		for i, st := range ticksNight(t) {
			if m == nil || st.restart {
				reg, regTold = prometheus.NewRegistry(), prometheus.NewRegistry()
				m, mTold = newWithSaved(reg, opts), newWithSaved(regTold, opts)
			}
			m.Update(st.pol, st.state, st.snap, nil, st.snap.Time)
			fmt.Fprintf(&got, "### tick %d: %s\n", i, st.what)
			writeScrape(t, &got, reg)

			mayErr := errorSamples(st.pol, st.snap)
			if mayErr {
				errTicks++
			}
			mTold.Metrics.update(st.pol, st.state, st.snap, st.snap.Time, mayErr)
			mTold.saved.Export(st.pol, st.state, nil, st.snap.Time)
			fmt.Fprintf(&told, "### tick %d: %s\n", i, st.what)
			writeScrape(t, &told, regTold)
		}
	}
	if got.String() != told.String() {
		t.Errorf("the scrapes differ when update is told which ticks hold no error sample:\n%s\nwant:\n%s", told.String(), got.String())
	}
	if errTicks == 0 {
		t.Error("no tick of the night has an error sample: update's reading of them was not tested")
	}
	const golden = "testdata/ticks.txt"
	if *rewrite {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	gotTicks, wantTicks := strings.Split(got.String(), "\n##"), strings.Split(string(want), "\n##")
	for i := range max(len(gotTicks), len(wantTicks)) {
		var g, w string
		if i < len(gotTicks) {
			g = gotTicks[i]
		}
		if i < len(wantTicks) {
			w = wantTicks[i]
		}
		if g != w {
			t.Fatalf("scrape differs from %s (-rewrite to accept):\ngot:\n%s\nwant:\n%s", golden, g, w)
		}
	}
}

// errorSamples reports whether a signal of pol has an error sample in
// snap, as promapi.Collector.Errors counts them.
func errorSamples(pol *evaluator.Policy, snap evaluator.Snapshot) bool {
	for _, r := range pol.Routes() {
		for _, sig := range pol.Config.Signals {
			if snap.Get(r, sig.Name).Status == evaluator.StatusError {
				return true
			}
		}
	}
	return false
}

// notUpdated are the families that Update does not write: what the tick
// loop and reloads record, and hermes_build_info (it names the Go version).
var notUpdated = []string{"hermes_build_info", "hermes_tick_duration_seconds", "hermes_ticks_total", "hermes_ticks_skipped_total",
	"hermes_last_tick_timestamp_seconds", "hermes_config_last_reload_successful", "hermes_config_last_reload_success_timestamp_seconds",
	"hermes_config_reloads_total", "hermes_config_reload_requests_total"}

// writeScrape writes what reg gathers in the text format, without HELP
// lines and the notUpdated families.
func writeScrape(t *testing.T, w *bytes.Buffer, reg prometheus.Gatherer) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if slices.Contains(notUpdated, mf.GetName()) {
			continue
		}
		if err := enc.Encode(mf); err != nil {
			t.Fatal(err)
		}
	}
	for line := range strings.Lines(b.String()) {
		if !strings.HasPrefix(line, "# HELP ") {
			w.WriteString(line)
		}
	}
}
