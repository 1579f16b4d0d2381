package evaluator

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
)

// windowedPolicy is the shipped policy with hard_fail_ratio and
// soft_fail_ratio also counted over 5m and 15m: testenv.LongWindows, which
// web/api's TestContributionWire writes on the wire.
func windowedPolicy(t *testing.T) *Policy {
	t.Helper()
	return editedPolicy(t, func(c *config.Config) {
		for i := range c.Signals {
			if s := &c.Signals[i]; s.Name == "hard_fail_ratio" || s.Name == "soft_fail_ratio" {
				s.Windows = []time.Duration{5 * time.Minute, 15 * time.Minute}
			}
		}
	})
}

// TestWindowedEvidence: a longer window narrows the signal's own interval
// unless a shorter window's calls contradict it; its text names the window
// that gave the bound (web/api.TestContributionWire writes it on the wire).
func TestWindowedEvidence(t *testing.T) {
	p := windowedPolicy(t)
	cases := []struct {
		name     string
		over     map[string]any
		signal   string
		wantText string
		// lo and hi bound the alert value (the interval's lower end) and
		// the score's Low.
		alertAtLeast, alertBelow float64
	}{{
		// A failback stage at 2 req/s: no failures in 120 calls a minute
		// prove nothing at 99.9 %; 1800 in 15m do.
		name: "thin stage proven healthy over 15m",
		over: map[string]any{"free.hard_fail_ratio": Sample{Value: 0, Volume: 120, Counted: true},
			"free.hard_fail_ratio@5m":  Sample{Value: 0, Volume: 600, Counted: true},
			"free.hard_fail_ratio@15m": Sample{Value: 0, Volume: 1800, Counted: true}},
		signal: "hard_fail_ratio", wantText: "0 of 1800 calls in 15m: ≤ 0.528 % at 99.9 %", alertBelow: 1e-9,
	}, {
		// 15 % content failures at 0.3 req/s: 41 of 270 calls in 15m.
		name: "thin failure proven over 15m",
		over: map[string]any{"free.soft_fail_ratio": Sample{Value: 0.167, Volume: 18, Counted: true},
			"free.soft_fail_ratio@5m":  Sample{Value: 0.144, Volume: 90, Counted: true},
			"free.soft_fail_ratio@15m": Sample{Value: 41.0 / 270, Volume: 270, Counted: true}},
		signal: "soft_fail_ratio", wantText: "41 of 270 calls in 15m: ≥ 9.64 % at 99.9 %", alertAtLeast: 0.09, alertBelow: 0.1,
	}, {
		// The failure ended: the 5m window shows none, so the 15m
		// window's old failures prove nothing against the route.
		name: "recent recovery wins over an old failure",
		over: map[string]any{"free.soft_fail_ratio": Sample{Value: 0, Volume: 18, Counted: true},
			"free.soft_fail_ratio@5m":  Sample{Value: 0, Volume: 90, Counted: true},
			"free.soft_fail_ratio@15m": Sample{Value: 41.0 / 270, Volume: 270, Counted: true}},
		signal: "soft_fail_ratio", wantText: "0 of 90 calls in 5m: ≤ 7.39 % at 99.9 %", alertBelow: 1e-9,
	}, {
		// 10 % hard failures at 0.1 req/s: the last minute's 6 calls
		// happen to hold none (≤ 68 % at 99.9 %), which does not
		// contradict what the 15m window proves, so it counts.
		name: "a quiet thin minute does not hide a failure",
		over: map[string]any{"free.hard_fail_ratio": Sample{Value: 0, Volume: 6, Counted: true},
			"free.hard_fail_ratio@5m":  Sample{Value: 2.0 / 30, Volume: 30, Counted: true},
			"free.hard_fail_ratio@15m": Sample{Value: 9.0 / 90, Volume: 90, Counted: true}},
		signal: "hard_fail_ratio", wantText: "9 of 90 calls in 15m: ≥ 2.81 % at 99.9 %", alertAtLeast: 0.01, alertBelow: 0.1,
	}, {
		// No window data: the signal's own evidence, as without windows.
		name:   "windows without data",
		over:   map[string]any{"free.soft_fail_ratio": Sample{Value: 0.25, Volume: 8, Counted: true}},
		signal: "soft_fail_ratio", wantText: "2 of 8 calls in 1m: not enough evidence", alertBelow: 0.05,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sc := ComputeScore("free", snap(p, time.Unix(0, 0), c.over), p, false)
			var got *Contribution
			for i := range sc.Contributions {
				if sc.Contributions[i].Signal == c.signal {
					got = &sc.Contributions[i]
				}
			}
			if text := got.ReasonText(); text != c.wantText {
				t.Errorf("text %q, want %q", text, c.wantText)
			}
			if !(got.AlertValue >= c.alertAtLeast && got.AlertValue < c.alertBelow) {
				t.Errorf("alert value %g, want within [%g, %g)", got.AlertValue, c.alertAtLeast, c.alertBelow)
			}
			gw, _, _ := got.Window()
			if strings.Contains(c.wantText, " in 15m") != (gw == 15*time.Minute) {
				t.Errorf("window %s for text %q", gw, c.wantText)
			}
		})
	}
}

// TestWithWindowsNeverWidens: windows only narrow the signal's own
// interval, and a window without calls or data changes nothing.
func TestWithWindowsNeverWidens(t *testing.T) {
	p := windowedPolicy(t)
	wins := p.windows[p.signalIndex["hard_fail_ratio"]]
	for _, v := range []float64{0, 0.01, 0.2, 1} {
		for _, n := range []float64{1, 10, 120, 5000} {
			own := proportionInterval(v, n, p.shown)
			for _, w := range []Sample{{Value: 0, Volume: 1800, Counted: true}, {Value: 0.3, Volume: 900, Counted: true},
				{Value: 0.1, Volume: 0, Counted: true}, {Value: 0.1, Volume: 100}, {Status: StatusMissing}} {
				smps := make([]Sample, len(p.columns))
				smps[wins[1].col] = w
				iv, _ := withWindows(own, v, 0, wins, smps, p.shown, nil, nil)
				if iv.lo < own.lo || iv.hi > own.hi || iv.lo > iv.hi {
					t.Errorf("v=%g n=%g window %+v: [%g, %g] outside own [%g, %g]", v, n, w, iv.lo, iv.hi, own.lo, own.hi)
				}
				if (!w.Counted || !(w.Volume > 0) || w.Status != StatusOK) && iv != own {
					t.Errorf("v=%g n=%g window %+v without evidence changed [%g, %g] to [%g, %g]", v, n, w, own.lo, own.hi, iv.lo, iv.hi)
				}
			}
		}
	}
}

// TestPolicyWantsDerivedWindows: a policy whose windowed signal was not
// through the loader (no derived window queries) is refused with its
// name, not sent with its own window's query as a longer window's.
func TestPolicyWantsDerivedWindows(t *testing.T) {
	pol := windowedPolicy(t).Config
	if _, err := NewPolicy(pol); err != nil {
		t.Fatalf("the loader's policy: %v", err)
	}
	p := *pol
	p.Signals = slices.Clone(p.Signals)
	i := slices.IndexFunc(p.Signals, func(s rules.SignalConfig) bool { return len(s.Windows) > 0 })
	p.Signals[i].Derived = rules.DerivedWindows{}
	if _, err := NewPolicy(&p); err == nil || !strings.Contains(err.Error(), p.Signals[i].Name) {
		t.Errorf("NewPolicy without derived windows: %v, want an error naming %s", err, p.Signals[i].Name)
	}
}
