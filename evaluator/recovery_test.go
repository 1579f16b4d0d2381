package evaluator

import (
	"slices"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/traffic"
)

// results is a counted sample of ok passing results of n.
func results(ok, n float64) Sample {
	return Sample{Value: ok / n, Volume: n, Counted: true}
}

// e2e sets free's end-to-end results over its own 5m window and its 10m,
// 30m and 45m windows (the shipped policy's) in over.
func e2e(over map[string]any, w5, w10, w30, w45 Sample) map[string]any {
	over["free.probe_e2e_success"] = w5
	over[rules.WindowColumn("probe_e2e_success", 10*time.Minute)] = w10
	over[rules.WindowColumn("probe_e2e_success", 30*time.Minute)] = w30
	over[rules.WindowColumn("probe_e2e_success", 45*time.Minute)] = w45
	return over
}

func contribution(t *testing.T, sc Score, signal string) Contribution {
	t.Helper()
	for _, c := range sc.Contributions {
		if c.Signal == signal {
			return c
		}
	}
	t.Fatalf("no contribution of %s", signal)
	return Contribution{}
}

// TestProbeResultsAreEvidence: the worked example of docs/detection.md.
// End-to-end probes run every 2 min; one failure among their results
// costs nothing, all of them failing for 15 minutes costs the signal's
// 25 points.
func TestProbeResultsAreEvidence(t *testing.T) {
	p := defaultPolicy(t)
	t0 := time.Unix(0, 0)
	// Window columns are keyed by the route too: prefix them.
	withRoute := func(over map[string]any) map[string]any {
		out := map[string]any{}
		for k, v := range over {
			if k[:5] != "free." {
				k = "free." + k
			}
			out[k] = v
		}
		return out
	}
	cases := []struct {
		name        string
		over        map[string]any
		wantPenalty float64
	}{
		{"one failed result in 15m", e2e(map[string]any{}, results(2, 3), results(4, 5), results(14, 15), results(21, 22)), 0},
		{"every result of 15m failing", e2e(map[string]any{}, results(0, 3), results(0, 5), results(7, 15), results(14, 22)), 25},
		{"two failed results in 15m", e2e(map[string]any{}, results(2, 3), results(3, 5), results(13, 15), results(20, 22)), 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := ComputeScore("free", snap(p, t0, withRoute(c.over)), p, false)
			if got := contribution(t, sc, "probe_e2e_success").Penalty; got != c.wantPenalty {
				t.Errorf("penalty %.1f, want %.1f (%v)", got, c.wantPenalty, sc.Reasons())
			}
		})
	}
}

// TestRecoveryScope: which signals Low holds to their far end.
func TestRecoveryScope(t *testing.T) {
	p := defaultPolicy(t)
	sig := func(name string) *rules.SignalConfig { return &p.Config.Signals[p.signalIndex[name]] }
	soft, hard, probe := sig("soft_fail_ratio"), sig("hard_fail_ratio"), sig("probe_e2e_success")
	known := recoveryScope{causes: []Cause{{Signal: "hard_fail_ratio", Share: 0.2}, {Signal: "p99_ratio"}}}
	unknown := scopeOf(&RouteState{SavedRoute: SavedRoute{Level: traffic.Failover}})
	for _, c := range []struct {
		name      string
		scope     recoveryScope
		sig       *rules.SignalConfig
		idle      bool
		strict    bool
		wantShare float64
	}{
		{"a cause, serving", known, hard, false, true, 0.2},
		{"not a cause, serving", known, soft, false, false, 0},
		{"a probe, serving", known, probe, false, false, 0},
		{"a probe, idle: the largest share", known, probe, true, true, 0.2},
		{"a call signal, idle", known, hard, true, false, 0},
		{"unknown causes, serving", unknown, soft, false, true, 0},
		{"unknown causes, a probe, idle", unknown, probe, true, true, 0},
		{"normal", scopeOf(&RouteState{}), soft, false, false, 0},
	} {
		if strict, share := c.scope.rules(c.sig, c.idle); strict != c.strict || share != c.wantShare {
			t.Errorf("%s: rules = %v, %g; want %v, %g", c.name, strict, share, c.strict, c.wantShare)
		}
	}
}

// TestRulesOut: a far end rules a failure share out only below it, in
// either direction of bound, and never without a share or a count.
func TestRulesOut(t *testing.T) {
	above := []rules.Bound{{Above: ptr(0.05)}}
	below := []rules.Bound{{Below: ptr(0.95)}}
	for _, c := range []struct {
		far   interval
		bs    []rules.Bound
		share float64
		want  bool
	}{
		{interval{lo: 0, hi: 0.19, counts: true}, above, 0.2, true},
		{interval{lo: 0, hi: 0.2, counts: true}, above, 0.2, false},
		{interval{lo: 0.81, hi: 1, counts: true}, below, 0.2, true},
		{interval{lo: 0.79, hi: 1, counts: true}, below, 0.2, false},
		{interval{lo: 0, hi: 0.01, counts: true}, above, 0, false},
		{interval{lo: 0, hi: 0.01}, above, 0.2, false},
	} {
		if got := rulesOut(c.far, c.bs, c.share); got != c.want {
			t.Errorf("rulesOut(%+v, %v, %g) = %v, want %v", c.far, c.bs, c.share, got, c.want)
		}
	}
}

// TestWithCauses: causes accumulate in policy order, keep the larger
// share of a signal seen twice, and are never written in place.
func TestWithCauses(t *testing.T) {
	p := defaultPolicy(t)
	t0 := time.Unix(0, 0)
	counted := func(v, n float64) Sample { return Sample{Value: v, Volume: n, Counted: true} }
	first := ComputeScore("free", snap(p, t0, map[string]any{"free.hard_fail_ratio": counted(0.3, 1000)}), p, false)
	causes := withCauses(p, nil, first)
	if len(causes) != 1 || causes[0].Signal != "hard_fail_ratio" || !(causes[0].Share > 0.25 && causes[0].Share < 0.3) {
		t.Fatalf("causes %+v, want hard_fail_ratio with the share it showed at least (0.25-0.3)", causes)
	}
	second := ComputeScore("free", snap(p, t0, map[string]any{"free.hard_fail_ratio": counted(0.4, 1000), "free.soft_fail_ratio": counted(0.5, 1000), "free.p99_ratio": 4.0}), p, false)
	kept := slices.Clone(causes)
	both := withCauses(p, causes, second)
	if !slices.Equal(causes, kept) {
		t.Errorf("withCauses wrote its input: %+v, was %+v", causes, kept)
	}
	var names []string
	for _, c := range both {
		names = append(names, c.Signal)
	}
	if want := []string{"soft_fail_ratio", "hard_fail_ratio", "p99_ratio"}; !slices.Equal(names, want) {
		t.Errorf("causes %v, want %v (policy order)", names, want)
	}
	if h := both[1].Share; !(h > 0.35 && h < 0.4) {
		t.Errorf("hard_fail_ratio share %g, want the larger one (0.35-0.4)", h)
	}
	third := ComputeScore("free", snap(p, t0, map[string]any{"free.hard_fail_ratio": counted(0.1, 1000)}), p, false)
	if again := withCauses(p, both, third); again[1].Share != both[1].Share {
		t.Errorf("hard_fail_ratio share fell from %g to %g", both[1].Share, again[1].Share)
	}
	if both[2].Share != 0 {
		t.Errorf("p99_ratio share %g, want 0: a latency is no share of calls", both[2].Share)
	}
	if again := withCauses(p, both, second); &again[0] != &both[0] {
		t.Error("withCauses copied causes that did not change")
	}
}

// TestFailingNow: a person is called on a failure shown in the failing
// signal's own window, not on a longer window's memory of one.
func TestFailingNow(t *testing.T) {
	p := defaultPolicy(t)
	t0 := time.Unix(0, 0)
	prefixed := func(over map[string]any) map[string]any {
		out := map[string]any{"free.soft_fail_ratio": "idle", "free.hard_fail_ratio": "idle"}
		for k, v := range over {
			if k[:5] != "free." {
				k = "free." + k
			}
			out[k] = v
		}
		return out
	}
	// Healed 16 minutes ago: the outage fills the 30m and 45m windows,
	// and one ordinary failure sits among the last 5m's results.
	healed := e2e(map[string]any{}, results(2, 3), results(4, 5), results(8, 15), results(9, 22))
	sc := ComputeScore("free", snap(p, t0, prefixed(healed)), p, true)
	if sc.Value >= p.level(traffic.Failover).RecoverAbove {
		t.Fatalf("score %.1f: the windows should show it failing, or there is nothing to tell apart (%v)", sc.Value, sc.Reasons())
	}
	if failingNow(p, sc) {
		t.Errorf("failing now on a long window's memory: %v", sc.Reasons())
	}
	// Still failing: every result of the last 5m fails.
	still := e2e(map[string]any{}, results(0, 3), results(1, 5), results(8, 15), results(9, 22))
	sc = ComputeScore("free", snap(p, t0, prefixed(still)), p, true)
	if !failingNow(p, sc) {
		t.Errorf("not failing now with every recent result failing: %v", sc.Reasons())
	}
}
