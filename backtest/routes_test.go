package backtest_test

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// TestRunStoreSeesWhatRunSees: RunStore, which reads each series's route
// and part once per window (RangeCache.QueryRoutes), hands the core the
// same snapshot at every tick as Run over the same recordings' instant
// queries (Windowed.Query through promapi.VectorRoutes), on scenarios with
// content failures, evidence windows and several routes going down.
func TestRunStoreSeesWhatRunSees(t *testing.T) {
	for _, name := range []string{"content_15", "cascade", "hard_outage", "flapping"} {
		t.Run(name, func(t *testing.T) {
			pol := testenv.DefaultPolicy(t)
			path := filepath.Join(scenarioDir, name+".yaml")
			snaps := func(run func(bt *backtest.Store, opts backtest.Options) error) []string {
				t.Helper()
				bt, err := backtest.OpenFile(path)
				if err != nil {
					t.Fatal(err)
				}
				defer bt.Close()
				var out []string
				opts := backtest.Options{OnTick: func(at time.Time, snap evaluator.Snapshot, _ evaluator.State) {
					var b strings.Builder
					fmt.Fprintf(&b, "%s:", at.Format(time.RFC3339))
					for k, v := range snap.All() {
						fmt.Fprintf(&b, " %s/%s=%+v", k[0], k[1], v)
					}
					out = append(out, b.String())
				}}
				if err := run(bt, opts); err != nil {
					t.Fatal(err)
				}
				return out
			}
			got := snaps(func(bt *backtest.Store, opts backtest.Options) error {
				_, err := backtest.RunStore(context.Background(), pol, bt, nil, opts)
				return err
			})
			want := snaps(func(bt *backtest.Store, opts backtest.Options) error {
				step := pol.Config.Global.EvaluationInterval
				queries := pol.Queries()
				w := backtest.NewWindowed(backtest.NewRecorder(bt, queries, step), queries, bt.Start(), bt.End(), step, backtest.DefaultWindow)
				defer w.Close()
				_, err := backtest.Run(context.Background(), pol, w.Query, bt.Start(), bt.End(), opts)
				return err
			})
			if len(got) == 0 || len(got) != len(want) || !strings.Contains(got[len(got)-1], "/") {
				t.Fatalf("RunStore saw %d ticks, Run %d", len(got), len(want))
			}
			for i := range got {
				if got[i] != want[i] {
					t.Fatalf("tick %d: RunStore saw\n%s\nRun saw\n%s", i, got[i], want[i])
				}
			}
		})
	}
}
