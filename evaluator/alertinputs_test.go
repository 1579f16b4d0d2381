package evaluator_test

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules"
)

// TestRuleReuseFollowsInputs steps a healthy fleet, then changes one
// signal of every route and wants exactly the route-scope rules that do
// not read that signal reused by the next tick (alertinputs.go), and the
// whole environment found unchanged only when no signal changed.
func TestRuleReuseFollowsInputs(t *testing.T) {
	p := testenv.DefaultPolicy(t, testenv.Fleet(3))
	now := time.Unix(1_700_000_000, 0)
	healthy := testenv.Healthy(p, now)
	var s evaluator.State
	for range 2 {
		now = now.Add(15 * time.Second)
		s, _ = evaluator.Step(p, s, evaluator.Input{Snapshot: healthy}, now)
	}
	route := p.Routes()[1]
	var all []string
	for _, a := range p.Config.Alerts {
		if a.Scope == "route" {
			all = append(all, a.Name)
		}
	}
	without := func(names ...string) []string {
		return slices.DeleteFunc(slices.Clone(all), func(n string) bool { return slices.Contains(names, n) })
	}
	for _, c := range []struct {
		signal string
		value  float64
		want   []string
		same   bool
	}{
		{"", 0, all, true},
		{"p99_ratio", 1.01, all, false}, // no rule reads it, the score stays 100
		{"p95_ratio", 1.01, without("HermesLatencyP95High"), false},
		{"error_body_ratio", 0.001, without("HermesErrorTemplatesInOK"), false},
		{"throughput_ratio", 0.9, without("HermesThroughputDrift"), false},
		// 20 points off: the score changes, so the rules reading it rerun.
		{"soft_fail_ratio", 0.05 + 20.0/300, without("HermesRouteScoreCritical", "HermesRouteScoreDegraded"), false},
	} {
		snap := healthy
		if c.signal != "" {
			snap = withSignal(healthy, c.signal, c.value)
		}
		got, same := evaluator.ReusableRules(p, s, snap, route)
		if !slices.Equal(got, c.want) || same != c.same {
			t.Errorf("%s = %v: reused %v (same %v), want %v (same %v)", c.signal, c.value, got, same, c.want, c.same)
		}
	}
}

// TestStepDoesNotDependOnRuleReuse is TestStepDoesNotDependOnMemo with
// values that move every tick, as a live fleet's do: each tick a few
// signals of random routes take a random value among healthy, bad and
// missing ones, so rules are reused while only what they do not read
// moved, and rerun when it did. A run carrying its state and one
// forgetting every memo must give the same events and states. Two more
// route rules read the service's split, which moves while a route's own
// inputs may not (a route takes traffic when the one before it fails).
func TestStepDoesNotDependOnRuleReuse(t *testing.T) {
	p := testenv.DefaultPolicy(t, memoFleet, func(cfg *rules.Config) {
		cfg.Alerts = append(cfg.Alerts,
			rules.AlertRuleConfig{Name: "TestRouteCarriesTraffic", Tier: "C", Scope: "route", Expr: "weights[route] > 0", Summary: "{{ .Route }} carries traffic"},
			rules.AlertRuleConfig{Name: "TestRouteInDegradedService", Tier: "C", Scope: "route", Expr: "degraded", Summary: "{{ .Service }} is degraded"})
	})
	rng := rand.New(rand.NewPCG(13, 14))
	now := time.Unix(1_700_000_000, 0)
	values := map[string][]float64{
		"p99_ratio": {1, 1.01, 1.2}, "p95_ratio": {1, 1.02, 1.7}, "error_body_ratio": {0, 0.001, 0.08},
		"soft_fail_ratio": {0.02, 0.021, 0.3}, "throughput_ratio": {1, 0.98, 0.3}, "quota_remaining": {0.8, 0.79, 0.1},
		"response_size_ratio": {1, 1.1, 2.5}, "hard_fail_ratio": {0.0002, 0.0003, 0.5},
	}
	names := make([]string, 0, len(values))
	for n := range values {
		names = append(names, n)
	}
	slices.Sort(names)
	var carried, fresh evaluator.State
	partly := 0
	snap := memoSnapshot(p, 0, now)
	for tick := range 300 {
		now = now.Add(15 * time.Second)
		if tick%50 == 0 {
			snap = memoSnapshot(p, rng.IntN(6), now)
		}
		next := snap.Clone()
		next.Time = now
		for range 1 + rng.IntN(20) {
			r, sig := p.Routes()[rng.IntN(len(p.Routes()))], names[rng.IntN(len(names))]
			if k := rng.IntN(4); k == 3 {
				next.Set(r, sig, evaluator.Sample{Status: evaluator.StatusMissing, Reason: "no sample"})
			} else {
				next.Set(r, sig, evaluator.Sample{Value: values[sig][k]})
			}
		}
		snap = next
		if tick > 0 {
			for _, r := range p.Routes() {
				if reused, same := evaluator.ReusableRules(p, carried, snap, r); len(reused) > 0 && !same {
					partly++
				}
			}
		}
		in := evaluator.Input{Snapshot: snap}
		if rng.IntN(20) == 0 {
			// A drill, real or dry run, on a route of svc2 (see
			// TestStepDoesNotDependOnMemo), now and then on a signal no
			// level reads.
			r, sig, v := p.Config.Services[2].Routes[rng.IntN(3)], "hard_fail_ratio", 0.5
			if rng.IntN(2) == 0 {
				sig, v = "p95_ratio", 1.7
			}
			in.Commands = []evaluator.Command{{Kind: evaluator.CommandDrill, Route: r, Reason: "reuse", DryRun: rng.IntN(2) == 0,
				Signals: map[string]float64{sig: v}, Expires: now.Add(time.Duration(1+rng.IntN(8)) * time.Minute)}}
		}
		carried, fresh = stepBoth(t, p, carried, fresh, in, now, tick)
	}
	t.Logf("%d route ticks reused some rule results in a changed environment", partly)
	if partly == 0 {
		t.Fatal("no route reused rule results in a changed environment: per-rule reuse was never exercised")
	}
}

// TestRuleReuseForgetsDrilledEnvironment: a route's alert is active, a
// drill on a signal no level reads re-renders its annotations, and when
// the drill ends the route's environment is again the one before it. Its
// memo must not take the annotations rendered in the drill for that one's.
func TestRuleReuseForgetsDrilledEnvironment(t *testing.T) {
	p := testenv.DefaultPolicy(t, testenv.Fleet(3))
	now := time.Unix(1_700_000_000, 0)
	route := p.Routes()[1]
	snap := withRouteSignal(testenv.Healthy(p, now), route, "quota_remaining", 0.1) // HermesQuotaLow
	var carried, fresh evaluator.State
	for tick := range 20 {
		now = now.Add(15 * time.Second)
		in := evaluator.Input{Snapshot: snap}
		if tick == 5 {
			in.Commands = []evaluator.Command{{Kind: evaluator.CommandDrill, Route: route, Reason: "reuse",
				Signals: map[string]float64{"p95_ratio": 1.7}, Expires: now.Add(time.Minute)}}
		}
		carried, fresh = stepBoth(t, p, carried, fresh, in, now, tick)
	}
	if a := carried.Alerts["HermesQuotaLow/"+p.Config.Services[0].Name+"/"+route]; a == nil || !a.Active() {
		t.Fatalf("HermesQuotaLow on %s is not active: the test no longer covers an active alert", route)
	}
}

// withRouteSignal is a copy of snap with signal set to v for route.
func withRouteSignal(snap evaluator.Snapshot, route, signal string, v float64) evaluator.Snapshot {
	out := snap.Clone()
	out.Set(route, signal, evaluator.Sample{Value: v})
	return out
}

// stepBoth steps carried, which keeps its memos, and fresh, which forgets
// them first, through the same tick, and fails unless both give the same
// events and states.
func stepBoth(t *testing.T, p *evaluator.Policy, carried, fresh evaluator.State, in evaluator.Input, now time.Time, tick int) (evaluator.State, evaluator.State) {
	t.Helper()
	var evsC, evsF []evaluator.Event
	carried, evsC = evaluator.Step(p, carried, in, now)
	fresh, evsF = evaluator.Step(p, evaluator.ForgetMemos(fresh), in, now)
	if a, b := jsonOf(t, evsC), jsonOf(t, evsF); a != b {
		t.Fatalf("tick %d: events differ\ncarried: %s\nfresh:   %s", tick, a, b)
	}
	if a, b := evaluator.StateText(carried), evaluator.StateText(fresh); a != b {
		t.Fatalf("tick %d: states differ\ncarried: %s\nfresh:   %s", tick, a, b)
	}
	return carried, fresh
}
