package backtest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/traffic"
)

// The failback of a route that fails over on error templates after ten
// minutes of serving them, and heals: the calls from before the failover
// stay in its 15m windows (and hard_fail_ratio's 30m) long after its
// first stage starts. Its stages are judged on the calls since it stopped
// serving users (evaluator/quiet.go), so leftovers abort nothing, and a
// route still broken at its stage fails in those calls and never passes
// stage 1.

// TestScenarioFailbackQuiet: the healed route's failback completes
// without an abort, within 2 × stages × observe of its failover. Before
// the rule its first stage aborted 2m15s after it began: "failback
// aborted: score 30.5 < 60 for 2m0s; soft_fail_ratio …: 33 of 183 calls
// in 15m: ≥ 10.7 %", calls from before the failover.
func TestScenarioFailbackQuiet(t *testing.T) {
	tl := runScenario(t, "failback_quiet", backtest.Options{})
	golden(t, "failback_quiet", tl)
	fo := failedOverAt(tl, "free", at(onset))
	if fo.IsZero() {
		t.Fatal("free never failed over")
	}
	for _, e := range events(tl, evaluator.EventFailback, "free") {
		if e.Stage != nil && *e.Stage == 0 {
			t.Errorf("failback aborted at %s: %v", e.Time.Format(time.TimeOnly), e.Reasons)
		}
	}
	stages, observe := 4, 15*time.Minute // the shipped failback.stages and observe
	var done time.Time
	for _, e := range events(tl, evaluator.EventLevel, "free") {
		if e.To == traffic.Normal.String() && e.Time.After(fo) {
			done = e.Time
			break
		}
	}
	if limit := fo.Add(2 * time.Duration(stages) * observe); done.IsZero() || done.After(limit) {
		t.Errorf("failback completed at %v, want by %s (2 × stages × observe after the failover at %s)", done, limit.Format(time.TimeOnly), fo.Format(time.TimeOnly))
	}
	assertNoFlapping(t, tl)
}

// TestScenarioFailbackQuietBroken: the same route still failing 30 % of
// its stage's calls shows that in the clean windows: its first stage
// steps back, no second stage starts, and it never returns to normal.
func TestScenarioFailbackQuietBroken(t *testing.T) {
	tl := runScenario(t, "failback_quiet_broken", backtest.Options{})
	golden(t, "failback_quiet_broken", tl)
	started, back := false, false
	for _, e := range events(tl, evaluator.EventFailback, "free") {
		switch {
		case e.Stage == nil:
		case *e.Stage == 1:
			started = true
		case *e.Stage == 0:
			back = true
			if why := strings.Join(e.Reasons, "; "); !strings.Contains(why, "error_body_ratio") {
				t.Errorf("stage 1 stepped back at %s without naming error_body_ratio: %s", e.Time.Format(time.TimeOnly), why)
			}
		default:
			t.Errorf("free, still broken, reached stage %d at %s: %v", *e.Stage, e.Time.Format(time.TimeOnly), e.Reasons)
		}
	}
	if !started || !back {
		t.Errorf("stage 1 started %v, stepped back %v: want both (its probes pass, its stage's calls fail)", started, back)
	}
	for _, e := range events(tl, evaluator.EventLevel, "free") {
		if e.To == traffic.Normal.String() {
			t.Errorf("free, still broken, back at normal at %s: %v", e.Time.Format(time.TimeOnly), e.Reasons)
		}
	}
}
