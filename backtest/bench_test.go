package backtest_test

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/promapi"
	"github.com/hermes-failover/hermes/rules/config"
)

// BenchmarkBacktestTick measures one evaluation tick of a backtest: every
// default signal queried through the real PromQL engine over the healthy
// scenario, then the core's Step.
func BenchmarkBacktestTick(b *testing.B) {
	cfg, err := config.Default()
	if err != nil {
		b.Fatal(err)
	}
	pol, err := evaluator.NewPolicy(cfg.Rules())
	if err != nil {
		b.Fatal(err)
	}
	f, err := backtest.ParseFile(filepath.Join(scenarioDir, "healthy.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	bt, err := backtest.Open(f)
	if err != nil {
		b.Fatal(err)
	}
	defer bt.Close()
	ctx := context.Background()
	var st evaluator.State
	var collector promapi.Collector
	t := bt.Start().Add(2 * time.Hour)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		snap := collector.Collect(ctx, promapi.VectorRoutes(bt.Query), cfg.Signals, pol.Routes(), t, cfg.Global.QueryTimeout)
		st, _ = evaluator.Step(pol, st, evaluator.Input{Snapshot: snap}, t)
		t = t.Add(cfg.Global.EvaluationInterval)
		if t.After(bt.End()) {
			t = bt.Start().Add(2 * time.Hour)
		}
	}
}
