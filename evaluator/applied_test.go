package evaluator

import (
	"testing"
	"time"

	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/traffic"
)

// TestLimitedMoveStepsFromApplied: with max_shift_per_tick 20, a pin of
// chat to paid-standard moves 20 points a tick. When the loop says the
// backends still hold free=100 (Input.Applied: their applies failed
// while the plan went on to free=80), the step starts from what they
// hold, free 100 → 80, not from the plan, 80 → 60. Without Applied the
// plan steps from itself, as backtests do.
func TestLimitedMoveStepsFromApplied(t *testing.T) {
	p := policyOf(t, []config.ActuatorConfig{{Name: "split", Type: "file", MaxShiftPerTick: 20}})
	t0 := time.Unix(1_700_000_000, 0).UTC()
	s, _ := Step(p, State{}, Input{Snapshot: snap(p, t0, nil)}, t0)
	if w := s.Services["chat"].Weights; w["free"] != 100 {
		t.Fatalf("setup: split %v", w)
	}
	s = s.Clone()
	s.Services["chat"].Weights = map[string]int{"free": 80, "paid-standard": 20, "paid-premium": 0}
	t1 := t0.Add(15 * time.Second)
	pin := Command{Kind: CommandPin, Service: "chat", Route: "paid-standard", Reason: "move"}
	held := traffic.Split{Weights: map[string]int{"free": 100, "paid-standard": 0, "paid-premium": 0}, RetriesEnabled: true}
	for _, c := range []struct {
		name    string
		applied map[string]traffic.Split
		free    int
	}{
		{"from what the backends hold", map[string]traffic.Split{"chat": held}, 80},
		{"from the plan", nil, 60},
	} {
		next, _ := Step(p, s, Input{Snapshot: snap(p, t1, nil), Commands: []Command{pin}, Applied: c.applied}, t1)
		if got := next.Services["chat"].Weights; got["free"] != c.free || got["paid-standard"] != 100-c.free {
			t.Errorf("%s: split %v, want free=%d", c.name, got, c.free)
		}
	}
}
