package telemetry

import (
	"github.com/hermes-failover/hermes/internal/testenv"

	"context"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/prometheus/model/labels"
	promvalue "github.com/prometheus/prometheus/model/value"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/runner/persist"
	"github.com/hermes-failover/hermes/traffic"
)

func policy(t *testing.T, edit func(*config.Config)) *evaluator.Policy {
	t.Helper()
	return testenv.DefaultPolicy(t, edit)
}

// healthy is a snapshot where every signal of every route answers.
func healthy(p *evaluator.Policy, t time.Time) evaluator.Snapshot {
	s := evaluator.Snapshot{Time: t}
	for _, r := range p.Routes() {
		for _, sig := range p.Config.Signals {
			s.Set(r, sig.Name, evaluator.Sample{Value: 0.5})
		}
	}
	return s
}

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// midFailback is a state with one route in each interesting situation.
func midFailback(p *evaluator.Policy, now time.Time) evaluator.State {
	return evaluator.State{
		Routes: map[string]*evaluator.RouteState{
			"free": {SavedRoute: evaluator.SavedRoute{Level: traffic.Failover, Since: now.Add(-40 * time.Minute), Stage: 2,
				StageSince: now.Add(-10*time.Minute + 250*time.Millisecond),
				Failbacks:  []time.Time{now.Add(-3 * time.Hour)}}, Score: evaluator.Score{Value: 91.5}},
			"paid-standard": {SavedRoute: evaluator.SavedRoute{Level: traffic.Manual, Since: now.Add(-5 * time.Minute),
				FailingSince: now.Add(-50 * time.Minute)}, Score: evaluator.Score{Value: 12}},
			"paid-premium": {SavedRoute: evaluator.SavedRoute{Level: traffic.Failover, Since: now.Add(-2 * time.Minute),
				FailingSince: now.Add(-2 * time.Minute), Released: true}, Score: evaluator.Score{Value: 40}},
		},
		Services: map[string]*traffic.Split{
			"chat": {Weights: map[string]int{"free": 30, "paid-standard": 0, "paid-premium": 70}, Degraded: false, RetriesEnabled: false},
		},
	}
}

func TestUpdateStateGauges(t *testing.T) {
	p := policy(t, nil)
	reg := prometheus.NewPedanticRegistry()
	m := newWithSaved(reg, Options{AllSignals: true})
	s := midFailback(p, t0)
	m.Update(p, s, healthy(p, t0), nil, t0)

	// Optional saved-state series exist only away from their default.
	const want = `
# HELP hermes_route_level Degradation level of the route: 0 normal, 1 warm, 2 shed, 3 failover, 4 manual.
# TYPE hermes_route_level gauge
hermes_route_level{route="free"} 3
hermes_route_level{route="paid-premium"} 3
hermes_route_level{route="paid-standard"} 4
# HELP hermes_failback_stage Failback stage of the route (1-based index into failback.stages); absent when none.
# TYPE hermes_failback_stage gauge
hermes_failback_stage{route="free"} 2
# HELP hermes_failback_stage_since_timestamp_seconds Unix time the route's failback stage began; absent when none.
# TYPE hermes_failback_stage_since_timestamp_seconds gauge
hermes_failback_stage_since_timestamp_seconds{route="free"} 1.77236580025e+09
# HELP hermes_route_failing_since_timestamp_seconds Unix time since which a failed-over route has been failing; absent when not failing.
# TYPE hermes_route_failing_since_timestamp_seconds gauge
hermes_route_failing_since_timestamp_seconds{route="paid-premium"} 1.77236628e+09
hermes_route_failing_since_timestamp_seconds{route="paid-standard"} 1.7723634e+09
# HELP hermes_route_traffic_ratio Planned share of the service's traffic sent to the route, 0 to 1.
# TYPE hermes_route_traffic_ratio gauge
hermes_route_traffic_ratio{route="free",service="chat"} 0.3
hermes_route_traffic_ratio{route="paid-premium",service="chat"} 0.7
hermes_route_traffic_ratio{route="paid-standard",service="chat"} 0
# HELP hermes_route_released 1 when a person released the route from manual and its next failback ignores the budget; absent otherwise.
# TYPE hermes_route_released gauge
hermes_route_released{route="paid-premium"} 1
# HELP hermes_failbacks_total Completed failbacks of the route; from the route's first departure from normal.
# TYPE hermes_failbacks_total counter
hermes_failbacks_total{route="free"} 0
hermes_failbacks_total{route="paid-premium"} 0
hermes_failbacks_total{route="paid-standard"} 0
# HELP hermes_route_failbacks_in_window Completed failbacks of the route within the failback window; absent when none.
# TYPE hermes_route_failbacks_in_window gauge
hermes_route_failbacks_in_window{route="free"} 1
# HELP hermes_service_degraded 1 when every route of the service is bad and the least bad one serves it; absent otherwise.
# TYPE hermes_service_degraded gauge
`
	names := []string{"hermes_route_level", "hermes_route_level_info", "hermes_failback_stage",
		"hermes_failback_stage_since_timestamp_seconds", "hermes_route_failing_since_timestamp_seconds",
		"hermes_route_traffic_ratio", "hermes_route_released", "hermes_failbacks_total", "hermes_route_failbacks_in_window",
		"hermes_service_degraded"}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	if got := testenv.Metric(t, reg, persist.MetricRouteLevelSince, map[string]string{"route": "free"}); got != float64(t0.Add(-40*time.Minute).Unix()) {
		t.Errorf("free level since = %v", got)
	}
	if got := testenv.Metric(t, reg, "hermes_route_score", map[string]string{"route": "free"}); got != 91.5 {
		t.Errorf("free score = %v, want 91.5", got)
	}

	// The failback completes: its stage series go, and the counter counts
	// the new completion once.
	t1 := t0.Add(time.Hour)
	s.Routes["free"] = &evaluator.RouteState{SavedRoute: evaluator.SavedRoute{Level: traffic.Normal, Since: t1, Failbacks: []time.Time{t0.Add(-3 * time.Hour), t1}}}
	m.Update(p, s, healthy(p, t1), nil, t1)
	m.Update(p, s, healthy(p, t1.Add(time.Minute)), nil, t1.Add(time.Minute))
	const want2 = `
# HELP hermes_failbacks_total Completed failbacks of the route; from the route's first departure from normal.
# TYPE hermes_failbacks_total counter
hermes_failbacks_total{route="free"} 1
hermes_failbacks_total{route="paid-premium"} 0
hermes_failbacks_total{route="paid-standard"} 0
# HELP hermes_route_last_failback_timestamp_seconds Unix time of the route's last completed failback within the failback window; absent when none.
# TYPE hermes_route_last_failback_timestamp_seconds gauge
hermes_route_last_failback_timestamp_seconds{route="free"} 1.7723700e+09
# HELP hermes_failback_stage Failback stage of the route (1-based index into failback.stages); absent when none.
# TYPE hermes_failback_stage gauge
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want2),
		"hermes_failback_stage", "hermes_failbacks_total", "hermes_route_last_failback_timestamp_seconds"); err != nil {
		t.Error(err)
	}
	if problems, err := testutil.GatherAndLint(reg); err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %+v", err, problems)
	}
}

func TestUpdateSignals(t *testing.T) {
	p := policy(t, nil)
	reg := prometheus.NewRegistry()
	m := newWithSaved(reg, Options{AllSignals: true})
	snap := healthy(p, t0)
	snap.Set("free", "soft_fail_ratio", evaluator.Sample{Value: 0.11})
	snap.Set("free", "probe_success", evaluator.Sample{Value: math.NaN(), Status: evaluator.StatusMissing, Reason: "no data"})
	for _, r := range p.Routes() { // one failed query errs for every route
		snap.Set(r, "quality_score", evaluator.Sample{Value: math.NaN(), Status: evaluator.StatusError, Reason: "timeout"})
	}
	s := evaluator.State{Routes: map[string]*evaluator.RouteState{}}
	for _, r := range p.Routes() {
		s.Routes[r] = &evaluator.RouteState{SavedRoute: evaluator.SavedRoute{Since: t0}, Score: evaluator.ComputeScore(r, snap, p, false)}
	}
	m.Update(p, s, snap, nil, t0)

	const want = `
# HELP hermes_query_errors_total Failed signal queries, by signal and reason.
# TYPE hermes_query_errors_total counter
hermes_query_errors_total{reason="timeout",signal="quality_score"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "hermes_query_errors_total"); err != nil {
		t.Error(err)
	}
	status := series(t, reg, "hermes_signal_status")
	for _, k := range []string{"free/probe_success=1", "free/quality_score=2", "free/soft_fail_ratio=0", "paid-standard/quality_score=2"} {
		if !slices.Contains(status, k) {
			t.Errorf("hermes_signal_status lacks %s: %v", k, status)
		}
	}
	values := series(t, reg, "hermes_signal_value")
	if !slices.Contains(values, "free/soft_fail_ratio=0.11") {
		t.Errorf("hermes_signal_value lacks free/soft_fail_ratio=0.11: %v", values)
	}
	for _, v := range values {
		if strings.HasPrefix(v, "free/probe_success") || strings.Contains(v, "/quality_score") {
			t.Errorf("hermes_signal_value kept a series for a signal without data: %s", v)
		}
	}
	if want := len(p.Routes())*len(p.Config.Signals) - 1 - len(p.Routes()); len(values) != want {
		t.Errorf("%d hermes_signal_value series, want %d", len(values), want)
	}
	penalties := series(t, reg, "hermes_signal_penalty")
	if !slices.Contains(penalties, "free/soft_fail_ratio=18") {
		t.Errorf("hermes_signal_penalty lacks free/soft_fail_ratio=18: %v", penalties)
	}

	// The data comes back: the value series returns, errors count again.
	m.Update(p, s, healthy(p, t0), nil, t0)
	if values := series(t, reg, "hermes_signal_value"); len(values) != len(p.Routes())*len(p.Config.Signals) {
		t.Errorf("%d hermes_signal_value series after recovery, want all", len(values))
	}
}

// series lists the series of one family as "route/signal=value".
func series(t *testing.T, g prometheus.Gatherer, name string) []string {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.Metric {
			var route, signal string
			for _, l := range m.Label {
				switch l.GetName() {
				case "route":
					route = l.GetValue()
				case "signal":
					signal = l.GetValue()
				}
			}
			out = append(out, route+"/"+signal+"="+strconv.FormatFloat(value(m), 'g', -1, 64))
		}
	}
	return out
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Gauge != nil:
		return m.Gauge.GetValue()
	case m.Counter != nil:
		return m.Counter.GetValue()
	}
	return math.NaN()
}

func TestUpdateAfterReload(t *testing.T) {
	p := policy(t, nil)
	reg := prometheus.NewRegistry()
	m := newWithSaved(reg, Options{AllSignals: true})
	s := midFailback(p, t0)
	m.Update(p, s, healthy(p, t0), nil, t0)

	// The reload drops paid-standard, the quality_score signal and renames
	// the service.
	p2 := policy(t, func(c *config.Config) {
		c.Services = []rules.ServiceConfig{{Name: "assistant", Routes: []string{"free", "paid-premium"}}}
		c.Signals = slices.DeleteFunc(c.Signals, func(s rules.SignalConfig) bool { return s.Name == "quality_score" })
		c.Scoring.Penalties = slices.DeleteFunc(c.Scoring.Penalties, func(p rules.PenaltyConfig) bool { return p.Signal == "quality_score" })
		c.Scoring.Caps = slices.DeleteFunc(c.Scoring.Caps, func(p rules.CapConfig) bool { return p.Signal == "quality_score" })
		c.Scoring.Floors = slices.DeleteFunc(c.Scoring.Floors, func(p rules.FloorConfig) bool { return p.Signal == "quality_score" })
	})
	s.Services = map[string]*traffic.Split{"assistant": {Weights: map[string]int{"free": 30, "paid-premium": 70}}}
	delete(s.Routes, "paid-standard")
	m.Update(p2, s, healthy(p2, t0), nil, t0)

	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, mt := range mf.Metric {
			for _, l := range mt.Label {
				if l.GetValue() == "paid-standard" || l.GetValue() == "quality_score" || l.GetValue() == "chat" {
					t.Errorf("%s%v survived the reload", mf.GetName(), mt.Label)
				}
			}
		}
	}
	if n := testutil.CollectAndCount(reg, persist.MetricRouteLevel); n != 2 {
		t.Errorf("%d %s series, want 2", n, persist.MetricRouteLevel)
	}
	if n := testutil.CollectAndCount(reg, persist.MetricRouteTrafficRatio); n != 2 {
		t.Errorf("%d %s series, want 2", n, persist.MetricRouteTrafficRatio)
	}
}

func TestTickAndConfigMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	m := newWithSaved(reg, Options{AllSignals: true})
	m.ConfigReload(true, t0)
	m.ObserveTick(120*time.Millisecond, t0)
	m.ObserveTick(80*time.Millisecond, t0.Add(30*time.Second))
	m.TickSkipped()
	m.QueryError("probe_success", "timeout")
	m.ConfigReload(false, t0.Add(time.Minute))

	const want = `
# HELP hermes_ticks_total Ticks evaluated.
# TYPE hermes_ticks_total counter
hermes_ticks_total 2
# HELP hermes_ticks_skipped_total Ticks skipped because the previous one overran its slot.
# TYPE hermes_ticks_skipped_total counter
hermes_ticks_skipped_total 1
# HELP hermes_last_tick_timestamp_seconds Unix time of the last evaluated tick.
# TYPE hermes_last_tick_timestamp_seconds gauge
hermes_last_tick_timestamp_seconds 1.77236643e+09
# HELP hermes_query_errors_total Failed signal queries, by signal and reason.
# TYPE hermes_query_errors_total counter
hermes_query_errors_total{reason="timeout",signal="probe_success"} 1
# HELP hermes_config_last_reload_successful 1 when the last configuration (re)load succeeded.
# TYPE hermes_config_last_reload_successful gauge
hermes_config_last_reload_successful 0
# HELP hermes_config_last_reload_success_timestamp_seconds Unix time of the last successful configuration (re)load.
# TYPE hermes_config_last_reload_success_timestamp_seconds gauge
hermes_config_last_reload_success_timestamp_seconds 1.7723664e+09
# HELP hermes_config_reloads_total Configuration (re)loads, by result (success, failure).
# TYPE hermes_config_reloads_total counter
hermes_config_reloads_total{result="failure"} 1
hermes_config_reloads_total{result="success"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want),
		"hermes_ticks_total", "hermes_ticks_skipped_total", "hermes_last_tick_timestamp_seconds", "hermes_query_errors_total",
		"hermes_config_last_reload_successful", "hermes_config_last_reload_success_timestamp_seconds", "hermes_config_reloads_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(m.tickDuration); n != 1 {
		t.Errorf("%d tick duration histograms, want 1", n)
	}
	if n, err := testutil.GatherAndCount(reg, "hermes_build_info"); err != nil || n != 1 {
		t.Errorf("%d hermes_build_info series (%v), want 1", n, err)
	}

	// Two Metrics on two registries do not collide; nil registers nothing.
	New(prometheus.NewRegistry(), Options{})
	New(nil, Options{}).ObserveTick(time.Second, t0)
}

// TestExportRestoreRoundTrip exports a State, scrapes it twice into series
// (as Prometheus would), runs persist.Restore's queries on the real PromQL
// engine over them and checks the state comes back: export and restore
// agree on names, labels and units.
func TestExportRestoreRoundTrip(t *testing.T) {
	p := policy(t, nil)
	reg := prometheus.NewRegistry()
	m := newWithSaved(reg, Options{AllSignals: true})
	now := t0
	scrape1, scrape2 := now.Add(-10*time.Minute), now.Add(-15*time.Second)

	// An older state, scraped 10 min ago: free was failing then, released
	// from manual and the service degraded. Those facts' series ended since
	// (a stale marker, as Prometheus writes when a series goes): they must
	// come back as their defaults, not as their last values.
	old := midFailback(p, now)
	old.Routes["free"] = &evaluator.RouteState{SavedRoute: evaluator.SavedRoute{Level: traffic.Failover, Since: now.Add(-70 * time.Minute),
		FailingSince: now.Add(-70 * time.Minute), Released: true}}
	old.Services["chat"] = &traffic.Split{Weights: map[string]int{"free": 0, "paid-standard": 0, "paid-premium": 100}, Degraded: true}
	m.Update(p, old, healthy(p, scrape1), nil, scrape1)
	stored := map[string]*backtest.Series{}
	scrape(t, reg, scrape1, stored)

	want := midFailback(p, now)
	m.Update(p, want, healthy(p, scrape2), nil, scrape2)
	scrape(t, reg, scrape2, stored)

	// Another job's series must not leak in through the selector.
	decoy := labels.FromStrings("__name__", persist.MetricRouteLevel, "job", "other", "route", "free")
	stored[decoy.String()] = &backtest.Series{Labels: decoy, Samples: []backtest.Sample{{T: scrape2.UnixMilli(), F: 4}}}

	f := &backtest.File{Interval: 15 * time.Second}
	for _, s := range stored {
		f.Series = append(f.Series, *s)
	}
	b, err := backtest.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()

	got, report, err := persist.Restore(context.Background(), b.Query, p, now, persist.RestoreOptions{Selector: `job="hermes"`})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("restore report:\n%s", strings.Join(report, "\n"))
	for _, r := range p.Routes() {
		w, g := want.Routes[r], got.Routes[r]
		if g == nil {
			t.Errorf("%s not restored", r)
			continue
		}
		same := func(a, b time.Time) bool { return a.Truncate(time.Second).Equal(b.Truncate(time.Second)) }
		if g.Level != w.Level || g.Stage != w.Stage || g.Released != w.Released || !same(g.Since, w.Since) ||
			!same(g.StageSince, w.StageSince) || !same(g.FailingSince, w.FailingSince) || len(g.Failbacks) != len(w.Failbacks) {
			t.Errorf("%s restored as\n%+v\nwant\n%+v", r, *g, *w)
		}
		for i := range w.Failbacks {
			if !same(g.Failbacks[i], w.Failbacks[i]) {
				t.Errorf("%s failback %d at %s, want %s", r, i, g.Failbacks[i], w.Failbacks[i])
			}
		}
	}
	if w, g := want.Services["chat"], got.Services["chat"]; g == nil || !maps.Equal(g.Weights, w.Weights) ||
		g.Degraded != w.Degraded || g.RetriesEnabled != w.RetriesEnabled {
		t.Errorf("chat restored as %+v, want %+v", g, w)
	}

	// Beyond the tolerance nothing is restored.
	late := now.Add(2 * time.Hour)
	got, _, err = persist.Restore(context.Background(), b.Query, p, late, persist.RestoreOptions{Selector: `job="hermes"`})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Routes) != 0 || len(got.Services) != 0 {
		t.Errorf("restored %d routes and %d services from series older than the tolerance", len(got.Routes), len(got.Services))
	}
}

// scrape gathers reg at ts into into, as a scrape of job "hermes" would
// store it (gauges and counters only).
func scrape(t *testing.T, reg prometheus.Gatherer, ts time.Time, into map[string]*backtest.Series) {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, m := range mf.Metric {
			if m.Gauge == nil && m.Counter == nil {
				continue
			}
			b := labels.NewScratchBuilder(len(m.Label) + 2)
			b.Add("__name__", mf.GetName())
			b.Add("job", "hermes")
			for _, l := range m.Label {
				b.Add(l.GetName(), l.GetValue())
			}
			b.Sort()
			ls := b.Labels()
			s := into[ls.String()]
			if s == nil {
				s = &backtest.Series{Labels: ls}
				into[ls.String()] = s
			}
			s.Samples = append(s.Samples, backtest.Sample{T: ts.UnixMilli(), F: value(m)})
		}
	}
	for _, s := range into { // series that ended get a stale marker
		if n := len(s.Samples); n > 0 && s.Samples[n-1].T < ts.UnixMilli() && !promvalue.IsStaleNaN(s.Samples[n-1].F) {
			s.Samples = append(s.Samples, backtest.Sample{T: ts.UnixMilli(), F: math.Float64frombits(promvalue.StaleNaN)})
		}
	}
}

// TestUnknownSplitHasNoRatio: a service whose split Hermes does not know
// exports no hermes_route_traffic_ratio (its split in the state is the
// core's placeholder, which a chart would show and the next restart read
// back); once it is known, the ratios come back with the rest unchanged.
func TestUnknownSplitHasNoRatio(t *testing.T) {
	p := policy(t, nil)
	reg := prometheus.NewPedanticRegistry()
	m := newWithSaved(reg, Options{})
	s := midFailback(p, t0)
	ratio := func(route string) float64 {
		return testenv.Metric(t, reg, persist.MetricRouteTrafficRatio, map[string]string{"service": "chat", "route": route})
	}
	m.Update(p, s, healthy(p, t0), nil, t0)
	if v := ratio("paid-premium"); v != 0.7 {
		t.Fatalf("known split: ratio of paid-premium = %v, want 0.7", v)
	}
	m.Update(p, s, healthy(p, t0), map[string]bool{"chat": true}, t0.Add(time.Minute))
	for _, r := range []string{"free", "paid-standard", "paid-premium"} {
		if v := ratio(r); v != -1 {
			t.Errorf("unknown split: ratio of %s = %v, want no series", r, v)
		}
	}
	if v := testenv.Metric(t, reg, persist.MetricRouteLevel, map[string]string{"route": "free"}); v != float64(traffic.Failover) {
		t.Errorf("unknown split: level of free = %v, want it still exported", v)
	}
	m.Update(p, s, healthy(p, t0), nil, t0.Add(2*time.Minute))
	if v := ratio("free"); v != 0.3 {
		t.Errorf("known again: ratio of free = %v, want 0.3", v)
	}
}
