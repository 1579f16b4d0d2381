package backtest

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/hermes-failover/hermes/rules/config"
)

// TestNativeAggMatchesEngine checks that every recording computed as a
// nativeAgg has the engine's values bit for bit: the shipped policy's on
// every scenario, window by window, and sums and quantiles of random
// recorded series with gaps, stale markers, NaNs, values of very different
// sizes, unsorted and duplicate bounds and bad le labels.
func TestNativeAggMatchesEngine(t *testing.T) {
	onScenarios(t, func(t *testing.T, cfg *config.Config, b *Store, rec *Recorder) {
		step := cfg.Global.EvaluationInterval
		var sums, quantiles int
		for _, a := range rec.natives {
			switch {
			case a == nil:
			case a.isQuantile:
				quantiles++
			default:
				sums++
			}
		}
		if sums == 0 || quantiles == 0 {
			t.Fatalf("%d sums and %d quantiles of the shipped policy are native, want both", sums, quantiles)
		}
		ctx := context.Background()
		windows(b, step, func(from, end time.Time) {
			if !rec.record(ctx, v1.Range{Start: from, End: end, Step: step}) {
				t.Fatalf("recording failed in the window from %s", from)
			}
			for i, a := range rec.natives {
				if a != nil {
					sameAggAsEngine(t, rec, rec.plan.recs[i].expr, a, rec.series[rec.nativeSrc[i]], from.UnixMilli(), end.UnixMilli(), step)
				}
			}
		})
	})
	t.Run("random series", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(3, 4))
		stale := math.Float64frombits(value.StaleNaN)
		const step = 15 * time.Second
		b, err := Open(&File{Interval: step, Series: []Series{{Labels: labels.FromStrings("__name__", "x"), Samples: []Sample{{T: 0, F: 1}}}}})
		if err != nil {
			t.Fatal(err)
		}
		bounds := []string{"0.1", "0.5", "1", "1.0", "2.5", "+Inf", "Inf", "bad", "NaN", ""}
		aggs := map[string]*nativeAgg{}
		for round := range 40 {
			var in []*recSeries
			for _, route := range []string{"a", "b", "c"} {
				for _, le := range bounds {
					if rng.IntN(4) == 0 {
						continue
					}
					for x := range 1 + rng.IntN(2) {
						lb := labels.NewBuilder(labels.FromStrings("route", route, "x", string(rune('p'+x))))
						if le != "" {
							lb.Set("le", le)
						}
						in = append(in, &recSeries{labels: lb.Labels(), samples: randomRecorded(rng, stale)})
					}
				}
			}
			slices.SortFunc(in, func(x, y *recSeries) int { return labels.Compare(x.labels, y.labels) })
			rec := &Recorder{b: b, series: [][]*recSeries{in}}
			from := int64(1_700_000_000_000) + int64(round)*step.Milliseconds()
			end := from + 200*step.Milliseconds()
			for _, expr := range []string{
				`sum by (route, le) ({__hermes_recording__="0"})`,
				`sum by (route) ({__hermes_recording__="0"})`,
				`sum({__hermes_recording__="0"})`,
				`sum by (nothere) ({__hermes_recording__="0"})`,
				`histogram_quantile(0.99, {__hermes_recording__="0"})`,
				`histogram_quantile(0.5, {__hermes_recording__="0"})`,
				`histogram_quantile(0, {__hermes_recording__="0"})`,
				`histogram_quantile(1, {__hermes_recording__="0"})`,
				`histogram_quantile(1.5, {__hermes_recording__="0"})`,
			} {
				// One nativeAgg per expression for every round, as the
				// Recorder keeps one: its groups of the last round's series
				// must not outlive them; evaluated twice, the second time
				// from the groups the first kept.
				a := aggs[expr]
				if a == nil {
					e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
					if err != nil {
						t.Fatal(err)
					}
					var ok bool
					if a, ok = nativeAggOf(e); !ok {
						t.Fatalf("%s is not native", expr)
					}
					aggs[expr] = a
				}
				sameAggAsEngine(t, rec, expr, a, in, from, end, step)
				sameAggAsEngine(t, rec, expr, a, in, from, end, step)
			}
		}
	})
}

// randomRecorded returns random samples around 1,700,000,000,000 ms: mostly
// every 15 s, with gaps, stale markers, NaNs and values of very different
// sizes.
func randomRecorded(rng *rand.Rand, stale float64) []Sample {
	var out []Sample
	// Half the series on the step grid, so that samples fall exactly at
	// the lookback delta's edge.
	tm := int64(1_700_000_000_000) - 600_000 + int64(rng.IntN(2))*rng.Int64N(30_000)
	for range 300 {
		var v float64
		switch x := rng.IntN(100); {
		case x < 3:
			out = append(out, Sample{T: tm, F: stale})
			tm += rng.Int64N(60) * 15_000
		case x < 4:
			tm += rng.Int64N(60) * 15_000 // a gap without a marker
		case x < 5:
			v = math.NaN()
		case x < 10:
			v = rng.Float64() * 1e17
		case x < 15:
			v = -rng.Float64()
		default:
			v = rng.Float64() * 100
		}
		out = append(out, Sample{T: tm, F: v})
		tm += 15_000
		if rng.IntN(10) == 0 {
			tm += rng.Int64N(20_000) - 7_000
		}
	}
	return out
}

// sameAggAsEngine fails unless a over in, [from, end], is what the engine
// returns for expr on rec, bit for bit.
func sameAggAsEngine(t *testing.T, rec *Recorder, expr string, a *nativeAgg, in []*recSeries, from, end int64, step time.Duration) {
	t.Helper()
	got, ok := a.evaluate(in, from, end, step.Milliseconds(), nil)
	if !ok {
		t.Fatalf("%s: not evaluated natively", expr)
	}
	sameMatrixAsEngine(t, rec.b, rec, expr, got, from, end, step)
}

// TestNativeAggOf checks what is left to the engine.
func TestNativeAggOf(t *testing.T) {
	for expr, want := range map[string]bool{
		`sum by (route, le) ({__hermes_recording__="1"})`:             true,
		`sum({__hermes_recording__="1"})`:                             true,
		`histogram_quantile(0.9, {__hermes_recording__="1"})`:         true,
		`sum without (le) ({__hermes_recording__="1"})`:               false,
		`sum by (__name__) ({__hermes_recording__="1"})`:              false,
		`avg by (route) ({__hermes_recording__="1"})`:                 false,
		`sum by (route) ({__hermes_recording__="1"} offset 1m)`:       false,
		`sum by (route) ({__hermes_recording__="1",route="a"})`:       false,
		`sum by (route) (x)`:                                          false,
		`histogram_quantile(scalar(y), {__hermes_recording__="1"})`:   false,
		`histogram_quantile(0.9, sum({__hermes_recording__="1"}))`:    false,
		`histogram_quantile(0.9, {__hermes_recording__="1"} @ 100)`:   false,
		`histogram_quantile(0.9, {__hermes_recording__=~"1"})`:        false,
		`label_replace({__hermes_recording__="1"}, "a", "b", "", "")`: false,
	} {
		e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := nativeAggOf(e); ok != want {
			t.Errorf("%s: native %v, want %v", expr, ok, want)
		}
	}
}

// TestSplitNativeAggs checks which aggregations of recordings a query
// reads through a recording of their own. The second query of each case
// shares the aggregation's input, so that it is recorded.
func TestSplitNativeAggs(t *testing.T) {
	const (
		step   = 15 * time.Second
		shared = `sum by (le) (rate(x[1m])) > 0`
	)
	for q, want := range map[string]string{
		`sum by (route) (rate(x[1m])) / sum by (route) (rate(y[1m]))`:                           `{__hermes_recording__="2"} / {__hermes_recording__="3"}`,
		`min_over_time((histogram_quantile(0.9, sum by (le) (rate(x[1m]))))[2m:15s])`:           `min_over_time(({__hermes_recording__="2"})[2m:15s])`,
		`min_over_time((histogram_quantile(0.9, sum by (le) (rate(x[1m]))))[2m:15s] offset 1m)`: `min_over_time((histogram_quantile(0.9, {__hermes_recording__="0"}))[2m:15s] offset 1m)`,
		`min_over_time((histogram_quantile(0.9, sum by (le) (rate(x[1m]))))[2m:10s])`:           ``,
		`max(histogram_quantile(0.9, sum by (le) (rate(x[1m]))))`:                               `max(histogram_quantile(0.9, sum by (le) ({__hermes_recording__="0"})))`,
		`histogram_quantile(0.9, sum by (le) (rate(x[1m] offset 1m)))`:                          `histogram_quantile(0.9, {__hermes_recording__="0"} offset 1m)`,
	} {
		queries := []string{q, shared}
		p := planRecordings(queries, step, step)
		splitCounterRates(p, queries)
		splitNativeAggs(p, queries, step, step)
		if got := p.rewrite[q]; got != want {
			t.Errorf("%s\n  rewritten to %q\n  want %q", q, got, want)
			for _, r := range p.recs {
				t.Logf("recording %s (level %d, back %s): %s", r.id, r.level, r.back, r.expr)
			}
		}
	}
}

// TestSelectStepsAsWalk holds selectSteps, which finds its first sample by
// a binary search and takes a sample at the step without the lookback's
// test, to the plain walk it replaced, on random recorded series (gaps,
// stale markers, repeated timestamps, samples off the step grid) read from
// random steps, before, inside and past the samples.
func TestSelectStepsAsWalk(t *testing.T) {
	walk := func(samples []Sample, from, step int64, vals []float64, has []bool) {
		lookback := lookbackDelta.Milliseconds()
		j := -1
		for k := range vals {
			t := from + int64(k)*step
			for j+1 < len(samples) && samples[j+1].T <= t {
				j++
			}
			has[k] = j >= 0 && samples[j].T > t-lookback && !value.IsStaleNaN(samples[j].F)
			if has[k] {
				vals[k] = samples[j].F
			}
		}
	}
	rng := rand.New(rand.NewPCG(5, 6))
	stale := math.Float64frombits(value.StaleNaN)
	const step = 15_000
	for round := range 2000 {
		samples := randomRecorded(rng, stale)
		if round%3 == 0 {
			samples = samples[:rng.IntN(len(samples)+1)]
		}
		from := int64(1_700_000_000_000) - 900_000 + rng.Int64N(240)*step
		if round%2 == 0 {
			from += rng.Int64N(step) // off the grid
		}
		steps := 1 + rng.IntN(200)
		gotV, gotH := make([]float64, steps), make([]bool, steps)
		wantV, wantH := make([]float64, steps), make([]bool, steps)
		selectSteps(samples, from, step, gotV, gotH)
		walk(samples, from, step, wantV, wantH)
		for k := range steps {
			if gotH[k] != wantH[k] || (wantH[k] && math.Float64bits(gotV[k]) != math.Float64bits(wantV[k])) {
				t.Fatalf("round %d, step %d (t=%d): got %v %v, want %v %v", round, k, from+int64(k)*step, gotV[k], gotH[k], wantV[k], wantH[k])
			}
		}
	}
}
