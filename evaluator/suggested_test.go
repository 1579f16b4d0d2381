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

// TestPastBurstCompletesNoDwell: a burst of 502s in one scrape (6 of a
// 1.2 req/s route's 73 calls a minute) proves hard_fail_ratio past 1 %
// in the 1m window for 45 s and then in the 2m window for a minute more,
// longer than warm's and shed's 1m dwells. A dwell's last tick does not
// read a proof that rests only on a longer window whose failures one
// interval could hold while the own window shows none (Score.Proven): the
// burst moves nothing. A failure that lasts keeps failing in the own
// window, and moves.
func TestPastBurstCompletesNoDwell(t *testing.T) {
	p := defaultPolicy(t)
	t0 := time.Unix(0, 0).UTC()
	hard := func(f1, n1, f2, n2 float64) map[string]any {
		return map[string]any{
			"free.hard_fail_ratio":    Sample{Value: f1 / n1, Volume: n1, Counted: true},
			"free.hard_fail_ratio@2m": Sample{Value: f2 / n2, Volume: n2, Counted: true},
		}
	}
	burst := []map[string]any{hard(6, 73, 6, 146), hard(6, 63, 6, 140), hard(6, 59, 6, 140), hard(6, 70, 6, 146),
		hard(0, 75, 6, 146), hard(0, 75, 6, 149), hard(0, 77, 6, 152), hard(0, 80, 6, 159)}
	lasting := []map[string]any{hard(6, 73, 6, 146), hard(6, 63, 7, 140), hard(6, 59, 8, 140), hard(6, 70, 9, 146),
		hard(3, 75, 10, 146), hard(3, 75, 11, 149), hard(3, 77, 12, 152), hard(3, 80, 12, 159)}
	for _, c := range []struct {
		name  string
		ticks []map[string]any
		want  traffic.Level
	}{{"a burst that left the own window", burst, traffic.Normal}, {"a failure that lasts", lasting, traffic.Shed}} {
		t.Run(c.name, func(t *testing.T) {
			var rs RouteState
			for k, over := range c.ticks {
				now := t0.Add(time.Duration(k) * 15 * time.Second)
				sc := ComputeScore("free", snap(p, now, over), p, false)
				if k == 4 && c.want == traffic.Normal && !(sc.Value < p.Level(traffic.Warm).Below && sc.Proven() >= p.Level(traffic.Warm).Below) {
					t.Fatalf("burst in the 2m window only: value %.1f, proven %.1f, want the value below warm and the proven score not (%v)", sc.Value, sc.Proven(), sc.Reasons())
				}
				rs, _ = decideRoute(p, rs, sc, false, now)
			}
			if rs.Level != c.want {
				t.Errorf("level %s after %d ticks, want %s (value %.1f, proven %.1f: %v)", rs.Level, len(c.ticks), c.want, rs.Score.Value, rs.Score.Proven(), rs.Score.Reasons())
			}
		})
	}
}
