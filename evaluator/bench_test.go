package evaluator_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// benchSizes are the fleet sizes make bench measures the tick at.
var benchSizes = []int{100, 1000, 10000}

// BenchmarkStep measures one tick of the pure core over a ready snapshot
// with the shipped policy (scoring, levels, plan and alert rules) at 100,
// 1,000 and 10,000 routes. A tenth of the routes degrade (soft-fail 12 %)
// and recover every 40 ticks (10 minutes at 15 s), so levels, splits and
// alerts move as in a real fleet, not only a calm one. Within a phase
// the samples stay the same, in a new snapshot every tick. make bench derives
// the 10k/1k ratio from the routes=1000 and routes=10000 results.
func BenchmarkStep(b *testing.B) {
	for _, n := range benchSizes {
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			p := testenv.DefaultPolicy(b, testenv.Fleet(n))
			now := time.Unix(0, 0)
			healthy := testenv.Healthy(p, now)
			degraded := testenv.Degraded(p, healthy, 10, "soft_fail_ratio", 0.12)
			// Each tick reads a snapshot other than the last one, with the
			// same samples: a live tick's snapshot is always a new one.
			runChanging(b, p, [2][2]evaluator.Snapshot{{healthy, healthy.Clone()}, {degraded, degraded.Clone()}}, now)
		})
	}
}

// BenchmarkComputeScore measures scoring one route.
func BenchmarkComputeScore(b *testing.B) {
	p := testenv.DefaultPolicy(b, testenv.Fleet(3))
	sn := testenv.Degraded(p, testenv.Healthy(p, time.Unix(0, 0)), 3, "soft_fail_ratio", 0.2)
	b.ReportAllocs()
	for b.Loop() {
		_ = evaluator.ComputeScore("svc0-route0", sn, p, false)
	}
}
