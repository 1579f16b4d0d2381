package backtest_test

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// TestRunStoreStopsWhenCancelled: with the snapshots collected ahead of
// the core, a backtest cancelled between two ticks still returns at the
// next tick with the context's error, the ticks before it stepped in
// order, and the collection ahead stopped (RunStore returning at all
// shows it: it waits for it).
func TestRunStoreStopsWhenCancelled(t *testing.T) {
	pol := testenv.DefaultPolicy(t)
	bt, err := backtest.OpenFile(filepath.Join(scenarioDir, "cascade.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer bt.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const stopAt = 30
	var seen []time.Time
	opts := backtest.Options{OnTick: func(at time.Time, _ evaluator.Snapshot, _ evaluator.State) {
		seen = append(seen, at)
		if len(seen) == stopAt {
			cancel()
		}
	}}
	_, err = backtest.RunStore(ctx, pol, bt, nil, opts)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("RunStore after a cancel: error %v, want context.Canceled", err)
	}
	if len(seen) != stopAt {
		t.Fatalf("stepped %d ticks, want %d: the ticks up to the cancel and none after", len(seen), stopAt)
	}
	step := pol.Config.Global.EvaluationInterval
	for i := 1; i < len(seen); i++ {
		if !seen[i].Equal(seen[i-1].Add(step)) {
			t.Fatalf("tick %d at %s follows %s, want one step later", i, seen[i], seen[i-1])
		}
	}
}
