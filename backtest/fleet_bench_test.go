package backtest_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/internal/benchfleet"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// BenchmarkBacktest24h measures a whole backtest of 24 hours at the shipped
// 15 s interval (5,760 ticks) over the healthy scenario repeated four
// times, for the shipped service's 3 routes and for a fleet of 100.
func BenchmarkBacktest24h(b *testing.B) {
	src, err := backtest.ParseFile(filepath.Join(scenarioDir, "healthy.yaml"))
	if err != nil {
		b.Fatal(err)
	}
	for _, n := range []int{3, 100} {
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			f := benchfleet.Series(src, n, 4)
			pol := testenv.DefaultPolicy(b, benchfleet.Services(n))
			samples := 0
			for _, s := range f.Series {
				samples += len(s.Samples)
			}
			var ticks int
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				bt, err := backtest.Open(f)
				if err != nil {
					b.Fatal(err)
				}
				tl, err := backtest.RunStore(context.Background(), pol, bt, nil, backtest.Options{})
				bt.Close()
				if err != nil {
					b.Fatal(err)
				}
				ticks = int(tl.End.Sub(tl.Start)/tl.Step) + 1
			}
			if want := int(24 * time.Hour / pol.Config.Global.EvaluationInterval); ticks < want {
				b.Fatalf("replayed %d ticks, want at least %d (24 h)", ticks, want)
			}
			b.ReportMetric(float64(ticks), "ticks")
			b.ReportMetric(float64(samples), "samples")
		})
	}
}
