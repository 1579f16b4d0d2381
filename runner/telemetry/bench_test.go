package telemetry

import (
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// countingWriter counts what a scrape writes.
type countingWriter struct{ n int }

func (w *countingWriter) Write(p []byte) (int, error) { w.n += len(p); return len(p), nil }

// encodeScrape encodes everything reg holds in the text format a Prometheus
// scrapes, into w, and returns the number of series.
func encodeScrape(reg prometheus.Gatherer, w io.Writer) (int, error) {
	mfs, err := reg.Gather()
	if err != nil {
		return 0, err
	}
	enc := expfmt.NewEncoder(w, expfmt.NewFormat(expfmt.TypeTextPlain))
	series := 0
	for _, mf := range mfs {
		series += len(mf.GetMetric())
		if err := enc.Encode(mf); err != nil {
			return 0, err
		}
	}
	return series, nil
}

// fleetTick is the shipped policy over n routes in services of 4, with a
// tenth of the routes losing points, and the state after three ticks.
func fleetTick(b *testing.B, n int) (*evaluator.Policy, evaluator.State, evaluator.Snapshot, time.Time) {
	p := testenv.DefaultPolicy(b, testenv.Fleet(n))
	now := time.Unix(1_700_000_000, 0)
	snap := testenv.Degraded(p, testenv.Healthy(p, now), 10, "soft_fail_ratio", 0.12)
	var s evaluator.State
	for i := range 3 {
		s, _ = evaluator.Step(p, s, evaluator.Input{Snapshot: snap}, now.Add(time.Duration(i)*15*time.Second))
	}
	return p, s, snap, now
}

// BenchmarkScrape measures Hermes's own /metrics after a tick of the shipped
// policy, with a tenth of the routes degraded: bytes and series per scrape
// (what the Prometheus next to Hermes pays), and the time to encode it.
func BenchmarkScrape(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			p, s, snap, now := fleetTick(b, n)
			reg := prometheus.NewRegistry()
			m := New(reg, Options{})
			m.Update(p, s, snap, now)
			var w countingWriter
			var series int
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				w.n = 0
				var err error
				if series, err = encodeScrape(reg, &w); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(w.n), "bytes/scrape")
			b.ReportMetric(float64(series), "series/scrape")
		})
	}
}

// BenchmarkUpdate measures one tick's export of Hermes's own series (the
// saved state through persist's Exporter, scores, per-signal series) at
// the state of fleetTick.
func BenchmarkUpdate(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("routes=%d", n), func(b *testing.B) {
			p, s, snap, now := fleetTick(b, n)
			m := New(prometheus.NewRegistry(), Options{})
			m.Update(p, s, snap, now)
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				m.Update(p, s, snap, now)
			}
		})
	}
}
