package backtest_test

import (
	"context"
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules/config"
)

// TestScenarioMaxShiftPerTick backtests hard_outage with an actuator's
// max_shift_per_tick of 30 and a failback in one stage: the core plans the
// steps, so the timeline shows what users get. The failover drains the
// failed route at once (never limited); the failback moves 100 points off
// the healthy paid-standard, 30 a tick: free 30, 60, 90, 100.
func TestScenarioMaxShiftPerTick(t *testing.T) {
	pol := testenv.DefaultPolicy(t, func(c *config.Config) {
		c.Actuators = []config.ActuatorConfig{{Type: "file", MaxShiftPerTick: 30, Options: map[string]any{"path": "split.json"}}}
		c.Failback.Stages = []int{100}
	})
	bt, err := backtest.OpenFile(filepath.Join(scenarioDir, "hard_outage.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer bt.Close()
	tl, err := backtest.RunStore(context.Background(), pol, bt, nil, backtest.Options{})
	if err != nil {
		t.Fatal(err)
	}
	golden(t, "hard_outage_max_shift", tl)

	var free []int
	var failbackAt time.Time
	for _, e := range tl.Events {
		if e.Type == evaluator.EventFailback && e.Route == "free" && failbackAt.IsZero() {
			failbackAt = e.Time
		}
		if e.Type == evaluator.EventTraffic && e.Service == "chat" {
			free = append(free, e.Weights["free"])
		}
	}
	// The last event is failback complete: retries on again.
	if want := []int{100, 0, 30, 60, 90, 100, 100}; !slices.Equal(free, want) {
		t.Errorf("free's share at each traffic event = %v, want %v (failover at once, failback 30 a tick)", free, want)
	}
	if failbackAt.IsZero() {
		t.Fatal("no failback")
	}
	step := pol.Config.Global.EvaluationInterval
	for i, want := range []map[string]int{
		{"free": 30, "paid-standard": 70, "paid-premium": 0},
		{"free": 60, "paid-standard": 40, "paid-premium": 0},
		{"free": 90, "paid-standard": 10, "paid-premium": 0},
		{"free": 100, "paid-standard": 0, "paid-premium": 0},
	} {
		ts := failbackAt.Add(time.Duration(i) * step)
		if got := weightsAt(tl, "chat", ts); !maps.Equal(got, want) {
			t.Errorf("%s (tick %d of the failback): %v, want %v", ts.Format(time.TimeOnly), i+1, got, want)
		}
	}
}
