package evaluator_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules"
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

// BenchmarkStepWindows is BenchmarkStepChangingCounted's workload read as
// the live loop and backtests read it: each snapshot holds every column
// of the policy, its signals' longer windows too, in its order, and every
// window is counted (its own window's 300 calls times its length over the
// own window's), so each counted signal's windows are read as evidence.
// At 1,000 routes it is a quick look at the scoring path that the 24 h
// backtest spends most of Step in.
func BenchmarkStepWindows(b *testing.B) {
	for _, n := range []int{1000} {
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			p := testenv.DefaultPolicy(b, testenv.Fleet(n))
			now := time.Unix(0, 0)
			healthy := windowed(p, counted(p, testenv.Healthy(p, now)))
			var snaps [2][2]evaluator.Snapshot // [calm or degraded][even or odd tick]
			for k, base := range []evaluator.Snapshot{healthy, windowed(p, counted(p, testenv.Degraded(p, healthy, 10, "soft_fail_ratio", 0.12)))} {
				snaps[k][0] = base
				snaps[k][1] = windowed(p, counted(p, withSignal(base, "p99_ratio", 1.01)))
			}
			runChanging(b, p, snaps, now)
		})
	}
}

// windowed is snap laid out in p's columns (rules.Columns), each signal
// with longer windows given them at its own value, counted at its own
// volume times the window's length over its own window's.
func windowed(p *evaluator.Policy, snap evaluator.Snapshot) evaluator.Snapshot {
	cols := rules.Columns(p.Config.Signals)
	out := evaluator.NewSnapshot(snap.Time, p.Routes(), cols)
	for i, route := range p.Routes() {
		j := len(p.Config.Signals)
		for k, sig := range p.Config.Signals {
			smp := snap.Get(route, sig.Name)
			out.SetCell(i, k, smp)
			for _, w := range sig.Windows {
				ws := smp
				if own := sig.Derived.Own; own > 0 {
					ws.Volume = smp.Volume * float64(w) / float64(own)
				}
				out.SetCell(i, j, ws)
				j++
			}
		}
	}
	return out
}
