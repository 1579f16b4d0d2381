package backtest

import (
	"context"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"

	"github.com/hermes-failover/hermes/rules/config"
	"github.com/prometheus/prometheus/storage"
)

// TestCounterRateMatchesEngine checks that every recording computed as a
// counterRate has the engine's values bit for bit: the shipped policy's
// on every scenario, window by window, and rates and increases of random
// counters with resets, gaps, stale markers and irregular scrapes.
func TestCounterRateMatchesEngine(t *testing.T) {
	onScenarios(t, func(t *testing.T, cfg *config.Config, b *Store, rec *Recorder) {
		step := cfg.Global.EvaluationInterval
		n := 0
		for i, c := range rec.rates {
			if c == nil {
				continue
			}
			n++
			windows(b, step, func(from, end time.Time) {
				sameAsEngine(t, b, rec.plan.recs[i].expr, c, from.UnixMilli(), end.UnixMilli(), step)
			})
		}
		if n == 0 {
			t.Fatal("no recording of the shipped policy is a counter rate")
		}
	})
	t.Run("random counters", func(t *testing.T) {
		rng := rand.New(rand.NewPCG(1, 2))
		stale := math.Float64frombits(value.StaleNaN)
		for round := range 20 {
			f := &File{Interval: 15 * time.Second}
			for s := range 5 {
				var samples []Sample
				tm, v := int64(1_700_000_000_000)+rng.Int64N(60_000), rng.Float64()*100
				for range 400 {
					switch x := rng.IntN(100); {
					case x < 3:
						v = rng.Float64() * 5 // reset
					case x < 5:
						samples = append(samples, Sample{T: tm, F: stale})
						tm += rng.Int64N(600_000) // gap
					case x < 7:
						v = 0
					default:
						v += rng.ExpFloat64() * float64(rng.IntN(3))
					}
					samples = append(samples, Sample{T: tm, F: v})
					tm += 15_000 + rng.Int64N(3_000) - 1_500
				}
				f.Series = append(f.Series, Series{Labels: labels.FromStrings("__name__", "x_total", "i", string(rune('a'+s))), Samples: samples})
			}
			b, err := Open(f)
			if err != nil {
				t.Fatal(err)
			}
			for _, expr := range []string{`rate(x_total[1h])`, `increase(x_total[5m])`, `rate(x_total{i=~"a|c"}[90s])`, `increase(x_total[17s])`} {
				c, ok := parseCounterRate(t, expr)
				if !ok {
					t.Fatalf("%s is not a counter rate", expr)
				}
				from := alignUp(b.Start(), 15*time.Second).Add(time.Duration(round) * time.Minute)
				sameAsEngine(t, b, expr, c, from.UnixMilli(), b.End().UnixMilli(), 15*time.Second)
			}
		}
	})
}

// sameAsEngine fails unless c over [from, end] is what the engine returns
// for expr, bit for bit: decoding the series itself, and reading them
// from a window decoded for it and for a rate reaching further back, as
// the rates of one range share them.
func sameAsEngine(t *testing.T, b *Store, expr string, c *counterRate, from, end int64, step time.Duration) {
	t.Helper()
	ctx := context.Background()
	shared := (*decodedWindow)(nil).nextWindow(end)
	for _, s := range matchingSeries(b.series, c.matchers) {
		shared.want(s, from-c.rng)
		shared.want(s, from-c.rng-time.Hour.Milliseconds()-step.Milliseconds())
	}
	for _, dec := range []*decodedWindow{nil, shared} {
		got, ok, err := c.evaluate(ctx, matchingSeries(b.series, c.matchers), dec, from, end, step.Milliseconds(), nil)
		if err != nil || !ok {
			t.Fatalf("%s: ok %v, error %v", expr, ok, err)
		}
		sameMatrixAsEngine(t, b, b, expr, got, from, end, step)
	}
	if len(shared.entries) > 0 && !slices.ContainsFunc(slices.Collect(maps.Values(shared.entries)), func(e *decodedSeries) bool { return len(e.samples) > 0 }) {
		t.Fatalf("%s: the shared window decoded no series", expr)
	}
}

// TestParseCounterRate checks what is left to the engine.
func TestParseCounterRate(t *testing.T) {
	for expr, want := range map[string]bool{
		`rate(x[1h])`:                          true,
		`increase(x{a="b"}[5m])`:               true,
		`rate(x[1h] offset 5m)`:                false,
		`rate(x[1h] @ 100)`:                    false,
		`irate(x[1h])`:                         false,
		`delta(x[1h])`:                         false,
		`rate({__hermes_recording__="0"}[1h])`: false,
		`rate(x[1h:1m])`:                       false,
		`sum(rate(x[1h]))`:                     false,
	} {
		if _, ok := parseCounterRate(t, expr); ok != want {
			t.Errorf("%s: counter rate %v, want %v", expr, ok, want)
		}
	}
}

func parseCounterRate(t *testing.T, expr string) (*counterRate, bool) {
	t.Helper()
	e, err := parser.NewParser(parser.Options{}).ParseExpr(expr)
	if err != nil {
		t.Fatal(err)
	}
	return counterRateOf(e)
}

// TestSplitCounterRates checks which rates are recorded apart.
func TestSplitCounterRates(t *testing.T) {
	const step = 15 * time.Second
	for q, want := range map[string]string{
		`sum by (route) (rate(x[1h]))`:              `sum by (route) ({__hermes_recording__="0"})`,
		`increase(x{a="b"}[5m]) > 1`:                `{__hermes_recording__="0"} > 1`,
		`sum(rate(x[1h] offset 5m))`:                "",
		`sum(rate({__name__=~"x|y"}[1h]))`:          "",
		`max_over_time(sum(rate(x[1m]))[5m:15s])`:   "",
		`sum(rate(x[1h])) / sum(rate(x[1h] @ 100))`: "",
		`sum(irate(x[1h]))`:                         "",
	} {
		p := planRecordings([]string{q}, step, step)
		rates := splitCounterRates(p, []string{q})
		if got := p.rewrite[q]; got != want {
			t.Errorf("%s\n  rewritten to %q\n  want %q", q, got, want)
		}
		if want != "" && (len(rates) != 1 || rates[0] == nil) {
			t.Errorf("%s: recordings %v, want one counter rate", q, rates)
		}
	}
}

// sameMatrixAsEngine fails unless got is what b's engine returns for expr
// on q over [from, end], bit for bit.
func sameMatrixAsEngine(t *testing.T, b *Store, q storage.Queryable, expr string, got promql.Matrix, from, end int64, step time.Duration) {
	t.Helper()
	ctx := context.Background()
	qry, err := b.engine.NewRangeQuery(ctx, q, nil, expr, time.UnixMilli(from), time.UnixMilli(end), step)
	if err != nil {
		t.Fatal(err)
	}
	defer qry.Close()
	res := qry.Exec(ctx)
	if res.Err != nil {
		t.Fatal(res.Err)
	}
	want := res.Value.(promql.Matrix)
	if len(got) != len(want) {
		t.Fatalf("%s: %d series, want %d", expr, len(got), len(want))
	}
	for i := range want {
		if !labels.Equal(got[i].Metric, want[i].Metric) || len(got[i].Floats) != len(want[i].Floats) {
			t.Fatalf("%s: series %d is %s with %d points, want %s with %d", expr, i, got[i].Metric, len(got[i].Floats), want[i].Metric, len(want[i].Floats))
		}
		for j, p := range want[i].Floats {
			if g := got[i].Floats[j]; g.T != p.T || math.Float64bits(g.F) != math.Float64bits(p.F) {
				t.Fatalf("%s: %s at %d is %v at %d, want %v", expr, want[i].Metric, p.T, g.F, g.T, p.F)
			}
		}
	}
}
