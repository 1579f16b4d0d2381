package evaluator_test

import (
	"maps"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/traffic"
)

// TestStepReadsTheStateItIsGiven: a state whose Routes is replaced by
// another map of the same size (as a restore does) is judged from the new
// map's route states.
func TestStepReadsTheStateItIsGiven(t *testing.T) {
	p := testenv.DefaultPolicy(t)
	now := time.Unix(1_700_000_000, 0)
	var s evaluator.State
	s, _ = evaluator.Step(p, s, evaluator.Input{Snapshot: testenv.Healthy(p, now)}, now)
	s.Routes = maps.Clone(s.Routes)
	s.Routes["free"] = &evaluator.RouteState{SavedRoute: evaluator.SavedRoute{Level: traffic.Failover, Since: now}}
	now = now.Add(15 * time.Second)
	s, _ = evaluator.Step(p, s, evaluator.Input{Snapshot: testenv.Healthy(p, now)}, now)
	if got := s.Routes["free"].Level; got != traffic.Failover {
		t.Fatalf("free is %s after the tick, want failover: Step read another route state", got)
	}
	if w := s.Services["chat"].Weights["free"]; w != 0 {
		t.Fatalf("free gets %d %%, want 0", w)
	}
}
