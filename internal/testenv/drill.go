package testenv

import (
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
)

// CheckDrillPhases fails t unless every phase of a drill was recorded (at
// maps evaluator.DrillStarted, … to when), in order: injection ≤
// detection ≤ first move ≤ failover ≤ end.
func CheckDrillPhases(t testing.TB, at map[string]time.Time) {
	t.Helper()
	order := []string{evaluator.DrillStarted, evaluator.DrillDetected, evaluator.DrillMoved, evaluator.DrillFailedOver, evaluator.DrillEnded}
	for i, ph := range order {
		if at[ph].IsZero() {
			t.Fatalf("drill phase %s not recorded; phases %v", ph, at)
		}
		if i > 0 && at[ph].Before(at[order[i-1]]) {
			t.Errorf("drill phase %s at %s before %s at %s", ph, at[ph], order[i-1], at[order[i-1]])
		}
	}
}
