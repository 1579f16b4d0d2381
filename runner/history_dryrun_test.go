package runner

import (
	"context"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// TestDryRunDrillKeepsTheAppliedSplitInHistory (issue 34): while a
// dry-run drill fails free over in the core, the history's split and
// hermes_route_traffic_ratio show the split the actuators keep, not the
// plan (the chart showed paid at 100 % while nginx never moved); the
// state still plans the failover.
func TestDryRunDrillKeepsTheAppliedSplitInHistory(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.02}
		reg := prometheus.NewRegistry()
		r, _ := newFileRunner(t, fp, t.TempDir(), Options{Registerer: reg})
		start(t, r)
		time.Sleep(20 * time.Second)
		synctest.Wait()
		before := r.View().State.Services["chat"].Weights["free"]
		if before == 0 {
			t.Fatalf("free carries no traffic before the drill: %v", r.View().State.Services["chat"].Weights)
		}
		if _, err := r.Submit(context.Background(), evaluator.Command{Kind: evaluator.CommandDrill, Route: "free", DryRun: true,
			Signals: map[string]float64{"quota_remaining": 0.01}, Reason: "rehearsal", Expires: time.Now().Add(5 * time.Minute)}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		v := r.View()
		if planned := v.State.Services["chat"].Weights["free"]; planned != 0 {
			t.Fatalf("the core plans free at %d%% under a dry-run quota drill, want 0", planned)
		}
		ticks, _, source := r.History(context.Background(), time.Now().Add(-time.Minute))
		if source != "memory" || len(ticks) == 0 {
			t.Fatalf("history from %s, %d ticks", source, len(ticks))
		}
		if got := ticks[len(ticks)-1].Splits["chat"]["free"]; got != before {
			t.Errorf("the history's last split gives free %d%%, the actuators keep %d%%", got, before)
		}
		if got := testenv.Metric(t, reg, "hermes_route_traffic_ratio", map[string]string{"service": "chat", "route": "free"}); got != float64(before)/100 {
			t.Errorf("hermes_route_traffic_ratio of free is %v during the dry run, want the kept %v", got, float64(before)/100)
		}
	})
}
