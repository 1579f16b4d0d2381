package telemetry

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// Series per route, as docs/design.md documents them for the shipped
// policy: seriesPerCalmRoute for a route that is normal at full score
// (score, level and level info, failbacks counter, the saved-state series
// and its traffic share in its one service), plus three per signal
// (value, penalty, status) while the route is not normal or loses points.
const (
	seriesPerCalmRoute   = 12
	seriesPerSignalRoute = 3
)

// routeSeries counts the series of each route label in reg.
func routeSeries(t *testing.T, reg prometheus.Gatherer) map[string]int {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == labelRoute {
					n[l.GetValue()]++
				}
			}
		}
	}
	return n
}

func TestSeriesPerRoute(t *testing.T) {
	p := testenv.DefaultPolicy(t, testenv.Fleet(8))
	signals := len(p.Config.Signals)
	now := time.Unix(1_700_000_000, 0)
	healthy := testenv.Healthy(p, now)
	degraded := testenv.Degraded(p, healthy, 4, "soft_fail_ratio", 0.12) // svc0-route0, svc1-route0

	for _, tc := range []struct {
		name       string
		opts       Options
		snap       evaluator.Snapshot
		calm, lose int // series of a route at full score, of one losing points
	}{
		{"calm fleet", Options{}, healthy, seriesPerCalmRoute, 0},
		{"two routes lose points", Options{}, degraded, seriesPerCalmRoute, seriesPerCalmRoute + seriesPerSignalRoute*signals},
		{"--metrics.per-signal", Options{AllSignals: true}, healthy, seriesPerCalmRoute + seriesPerSignalRoute*signals, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := evaluator.Step(p, evaluator.State{}, evaluator.Input{Snapshot: tc.snap}, now)
			reg := prometheus.NewRegistry()
			m := New(reg, tc.opts)
			m.Update(p, s, tc.snap, now)
			for route, n := range routeSeries(t, reg) {
				want := tc.calm
				if s.Routes[route].Score.Value < 100 {
					want = tc.lose
				}
				if n != want {
					t.Errorf("route %s (score %.1f): %d series, want %d", route, s.Routes[route].Score.Value, n, want)
				}
			}
			if tc.lose > 0 && s.Routes["svc0-route0"].Score.Value == 100 {
				t.Fatal("svc0-route0 should lose points")
			}

			// Once every route is calm again its per-signal series go.
			m.Update(p, mustStep(t, p, s, healthy, now.Add(15*time.Second)), healthy, now.Add(15*time.Second))
			if !tc.opts.AllSignals {
				for route, n := range routeSeries(t, reg) {
					if n != seriesPerCalmRoute && strings.HasPrefix(route, "svc") {
						t.Errorf("route %s after recovery: %d series, want %d", route, n, seriesPerCalmRoute)
					}
				}
			}
		})
	}
}

// mustStep is one tick from s over snap.
func mustStep(t *testing.T, p *evaluator.Policy, s evaluator.State, snap evaluator.Snapshot, now time.Time) evaluator.State {
	t.Helper()
	next, _ := evaluator.Step(p, s, evaluator.Input{Snapshot: snap}, now)
	return next
}
