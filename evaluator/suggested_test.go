package evaluator

import (
	"testing"
	"time"

	"github.com/hermes-failover/hermes/traffic"
)

// TestDwellClockStartsOnSuggestion: a level's dwell runs from when the
// users' calls suggest it (the score with their bounds at
// scoring.recovery_confidence, Score.Suggested), and the move needs the
// proof at scoring.confidence on its tick. So 15 % error templates at
// 0.3 req/s, suggested for a minute before their proof arrives, move on
// the proof's first tick, where the dwell counted from the proof moved a
// minute later. A suggestion that one scrape could have made (4 502s
// among 120 calls at 2 req/s), or that rests on less than a call an evaluation
// interval (two failed end-to-end probes), starts no clock; and a
// suggestion that has run the dwell moves nothing without the proof.
func TestDwellClockStartsOnSuggestion(t *testing.T) {
	p := defaultPolicy(t)
	t0 := time.Unix(0, 0).UTC()
	step := 15 * time.Second
	calls := func(failed, of float64) Sample {
		return Sample{Value: failed / of, Volume: of, Counted: true}
	}
	// thin: error templates at 0.3 req/s, 36 calls in 2m and 54 in 3m.
	thin := func(f2, f3 float64) map[string]any {
		return map[string]any{
			"free.error_body_ratio":    calls(f2, 36),
			"free.error_body_ratio@3m": calls(f3, 54),
			"free.soft_fail_ratio":     Sample{Value: 0.02, Volume: 18, Counted: true},
		}
	}
	// burst: 502s at 2 req/s, 120 calls a minute (30 an interval).
	burst := func(f float64) map[string]any {
		return map[string]any{"free.hard_fail_ratio": calls(f, 120)}
	}
	// probes: end-to-end results every 2m, all failing.
	probes := func(f float64) map[string]any {
		return map[string]any{"free.probe_e2e_success": Sample{Value: 0, Volume: f, Counted: true}}
	}
	for _, c := range []struct {
		name string
		// ticks are the snapshots of each tick from t0, every 15 s.
		ticks []map[string]any
		// want is the level after the last tick.
		want traffic.Level
		// suggested: the first tick's score suggests a level (its
		// clock runs) without proving it.
		suggested bool
	}{
		{"thin failure suggested for a minute, then proven",
			[]map[string]any{thin(5, 6), thin(5, 6), thin(5, 7), thin(5, 7), thin(8, 9)}, traffic.Shed, true},
		{"thin failure suggested for a minute, not proven",
			[]map[string]any{thin(5, 6), thin(5, 6), thin(5, 7), thin(5, 7), thin(5, 7)}, traffic.Normal, true},
		{"a burst no proof yet, then proven for less than the dwell",
			[]map[string]any{burst(4), burst(4), burst(4), burst(4), burst(8)}, traffic.Normal, false},
		{"two failed e2e probes, then three",
			[]map[string]any{probes(2), probes(2), probes(2), probes(2), probes(3)}, traffic.Normal, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			var rs RouteState
			for k, over := range c.ticks {
				now := t0.Add(time.Duration(k) * step)
				sc := ComputeScore("free", snap(p, now, over), p, false)
				if k == 0 {
					if got := sc.Suggested() < p.Level(traffic.Warm).Below && sc.Value >= p.Level(traffic.Warm).Below; got != c.suggested {
						t.Fatalf("first tick: suggested without proof %v, want %v (value %.1f, suggested %.1f: %v)",
							got, c.suggested, sc.Value, sc.Suggested(), sc.Reasons())
					}
				}
				rs, _ = decideRoute(p, rs, sc, false, now)
			}
			if rs.Level != c.want {
				t.Errorf("level %s after %d ticks, want %s (value %.1f, suggested %.1f: %v)",
					rs.Level, len(c.ticks), c.want, rs.Score.Value, rs.Score.Suggested(), rs.Score.Reasons())
			}
		})
	}
}
