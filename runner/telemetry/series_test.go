package telemetry

import (
	"maps"
	"math"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/traffic"
)

// calmSeries are the series of a route that is normal at full score, as
// docs/design.md documents them: its score, level, level since and its
// traffic share in the one service it belongs to.
var calmSeries = []string{
	"hermes_route_level", "hermes_route_level_since_timestamp_seconds", "hermes_route_score", "hermes_route_traffic_ratio",
}

// scrapeRoutes scrapes reg over HTTP as Prometheus does and returns, for
// each route label, how many series of each metric name it has.
func scrapeRoutes(t *testing.T, reg prometheus.Gatherer) map[string]map[string]int {
	t.Helper()
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	resp, err := http.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]int{}
	for name, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() != labelRoute {
					continue
				}
				if out[l.GetValue()] == nil {
					out[l.GetValue()] = map[string]int{}
				}
				out[l.GetValue()][name]++
			}
		}
	}
	return out
}

// perSignal counts a route's per-signal series: a value per signal that
// answers, a penalty per signal taking points off, a status per signal
// that is not ok (all three for every signal with --metrics.per-signal).
type perSignal struct{ values, penalties, statuses int }

// want is the metric names of a route's series: calm plus extra, and its
// per-signal series.
func want(sig perSignal, extra ...string) map[string]int {
	out := map[string]int{}
	for _, n := range append(slices.Clone(calmSeries), extra...) {
		out[n] = 1
	}
	for n, c := range map[string]int{"hermes_signal_value": sig.values, "hermes_signal_penalty": sig.penalties, "hermes_signal_status": sig.statuses} {
		if c > 0 {
			out[n] = c
		}
	}
	return out
}

// TestSeriesPerRoute counts, from a scrape of /metrics, the series of a
// route in each state docs/design.md lists: the optional saved-state
// series appear only while their fact is not at its default, and go when
// it is again.
func TestSeriesPerRoute(t *testing.T) {
	p := testenv.DefaultPolicy(t, testenv.Fleet(8)) // svc0: svc0-route0..3, svc1: svc1-route0..3
	signals := len(p.Config.Signals)
	now := time.Unix(1_700_000_000, 0)
	healthy := testenv.Healthy(p, now)
	// Degraded shares the maps of the routes it leaves alone, so the
	// snapshot gets its own healthy copy: the Sets below stay out of healthy.
	snap := testenv.Degraded(p, testenv.Healthy(p, now), 4, "soft_fail_ratio", 0.12) // svc0-route0 and svc1-route0 lose points
	missing := p.Config.Signals[len(p.Config.Signals)-1].Name
	if missing == "soft_fail_ratio" {
		t.Fatal("pick another signal to go missing")
	}
	snap.Set("svc0-route0", missing, evaluator.Sample{Value: math.NaN(), Status: evaluator.StatusMissing, Reason: "no data"})
	// A signal that holds the level when missing (not ignored, not
	// requiring traffic) on a route at full score: HermesSignalMissing's
	// runbook reads its status series.
	const held = "probe_success"
	if i := slices.IndexFunc(p.Config.Signals, func(s rules.SignalConfig) bool { return s.Name == held }); i < 0 ||
		p.Config.Signals[i].Missing == rules.MissingIgnore || p.Config.Signals[i].RequiresTraffic {
		t.Fatalf("%s must hold the level when missing", held)
	}
	snap.Set("svc1-route3", held, evaluator.Sample{Value: math.NaN(), Status: evaluator.StatusMissing, Reason: "no data"})
	pin := evaluator.Command{Kind: evaluator.CommandPin, Service: "svc1", Route: "svc1-route1", Reason: "provider maintenance", By: "alice"}
	s, _ := evaluator.Step(p, evaluator.State{}, evaluator.Input{Snapshot: snap, Commands: []evaluator.Command{pin}}, now)
	if s.Overrides["svc1"].Route != "svc1-route1" {
		t.Fatalf("svc1 overrides %+v, want a pin", s.Overrides)
	}
	// Routes in the states a restore brings back, as Step leaves them.
	failover := func(rs evaluator.SavedRoute) *evaluator.RouteState {
		return &evaluator.RouteState{SavedRoute: rs, Score: evaluator.Score{Value: 40}}
	}
	s.Routes["svc0-route1"] = failover(evaluator.SavedRoute{Level: traffic.Failover, Since: now.Add(-time.Hour), FailingSince: now.Add(-time.Hour)})
	s.Routes["svc0-route2"] = failover(evaluator.SavedRoute{Level: traffic.Failover, Since: now.Add(-time.Hour), Stage: 1,
		StageSince: now.Add(-time.Minute), Failbacks: []time.Time{now.Add(-2 * time.Hour)}})
	s.Routes["svc0-route3"] = failover(evaluator.SavedRoute{Level: traffic.Manual, Since: now.Add(-time.Hour), Released: true})

	for _, tc := range []struct {
		name string
		opts Options
		want map[string]map[string]int // route → metric → series
	}{
		{"default", Options{}, map[string]map[string]int{
			"svc1-route2": want(perSignal{}),                                                                                        // calm
			"svc1-route1": want(perSignal{}),                                                                                        // calm, pinned by an operator: overrides live in the overrides file
			"svc1-route3": want(perSignal{signals - 1, 0, 1}, "hermes_alert_active_since_timestamp_seconds"),                        // full score, level held by a missing signal (HermesSignalMissing pending)
			"svc0-route0": want(perSignal{signals - 1, 1, 1}),                                                                       // normal, loses points to one signal, another missing
			"svc1-route0": want(perSignal{signals, 1, 0}),                                                                           // normal, loses points, its service pinned away from it
			"svc0-route1": want(perSignal{signals, 0, 0}, "hermes_failbacks_total", "hermes_route_failing_since_timestamp_seconds"), // failed over, failing
			"svc0-route2": want(perSignal{signals, 0, 0}, "hermes_failbacks_total", "hermes_failback_stage", "hermes_failback_stage_since_timestamp_seconds",
				"hermes_route_failbacks_in_window", "hermes_route_last_failback_timestamp_seconds"), // failing back, a failback in the window
			"svc0-route3": want(perSignal{signals, 0, 0}, "hermes_failbacks_total", "hermes_route_released"), // manual, released
		}},
		{"--metrics.per-signal", Options{AllSignals: true}, map[string]map[string]int{
			"svc1-route2": want(perSignal{signals, signals, signals}),
			"svc0-route0": want(perSignal{signals - 1, signals, signals}),
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			m := newWithSaved(reg, tc.opts)
			m.Update(p, s, snap, nil, now)
			got := scrapeRoutes(t, reg)
			for route, w := range tc.want {
				if !maps.Equal(got[route], w) {
					t.Errorf("%s: series %v\nwant %v", route, got[route], w)
				}
			}

			// Every route calm again: its optional series go, save the
			// failbacks counter of the routes that left normal.
			later := now.Add(15 * time.Second)
			calm := evaluator.State{Routes: map[string]*evaluator.RouteState{}, Services: s.Services}
			for r := range s.Routes {
				calm.Routes[r] = &evaluator.RouteState{SavedRoute: evaluator.SavedRoute{Since: later}, Score: evaluator.Score{Value: 100}}
			}
			m.Update(p, calm, healthy, nil, later)
			var kept perSignal
			if tc.opts.AllSignals {
				kept = perSignal{signals, signals, signals}
			}
			for route, n := range scrapeRoutes(t, reg) {
				w := want(kept)
				if slices.Contains([]string{"svc0-route1", "svc0-route2", "svc0-route3"}, route) {
					w["hermes_failbacks_total"] = 1 // a counter stays once it exists
				}
				if !maps.Equal(n, w) {
					t.Errorf("%s calm again: series %v\nwant %v", route, n, w)
				}
			}
		})
	}
}
