package evaluator_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// withSignal is a copy of snap with signal set to v for every route.
func withSignal(snap evaluator.Snapshot, signal string, v float64) evaluator.Snapshot {
	out := snap.Clone()
	for _, route := range snap.Routes() {
		out.Set(route, signal, evaluator.Sample{Value: v})
	}
	return out
}

// BenchmarkStepChangingCounted is BenchmarkStep's workload with every
// route's samples changing every tick, as a live fleet's do: p99_ratio
// alternates between 1.00 and 1.01 (both healthy), and every signal that
// has a volume or samples query is counted, as the live loop and
// backtests deliver them (300 calls, 300 samples), so each counted
// signal's interval and evidence text is computed for every route. Its
// 10,000-route figure is the core's budget in make bench (100 ms).
func BenchmarkStepChangingCounted(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			p := testenv.DefaultPolicy(b, testenv.Fleet(n))
			now := time.Unix(0, 0)
			healthy := counted(p, testenv.Healthy(p, now))
			var snaps [2][2]evaluator.Snapshot // [calm or degraded][even or odd tick]
			for k, base := range []evaluator.Snapshot{healthy, counted(p, testenv.Degraded(p, healthy, 10, "soft_fail_ratio", 0.12))} {
				snaps[k][0] = base
				snaps[k][1] = counted(p, withSignal(base, "p99_ratio", 1.01))
			}
			runChanging(b, p, snaps, now)
		})
	}
}

// counted is snap with every sample of a signal with a volume or samples
// query counted at 300.
func counted(p *evaluator.Policy, snap evaluator.Snapshot) evaluator.Snapshot {
	out := snap.Clone()
	for _, route := range snap.Routes() {
		for _, sig := range p.Config.Signals {
			if smp := snap.Get(route, sig.Name); sig.EvidenceQuery() != "" {
				smp.Volume, smp.Counted = 300, true
				out.Set(route, sig.Name, smp)
			}
		}
	}
	return out
}

// runChanging steps b.N ticks from now, 40 calm then 40 degraded, each
// phase alternating its two snapshots tick by tick.
func runChanging(b *testing.B, p *evaluator.Policy, snaps [2][2]evaluator.Snapshot, now time.Time) {
	var s evaluator.State
	b.ReportAllocs()
	b.ResetTimer()
	for i := range b.N {
		now = now.Add(15 * time.Second)
		s, _ = evaluator.Step(p, s, evaluator.Input{Snapshot: snaps[(i/40)%2][i%2]}, now)
	}
}
