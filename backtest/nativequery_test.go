package backtest

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
)

// TestNativeQueryMatchesEngine checks nativeQuery against the engine, bit
// for bit: every query of the shipped policy that it evaluates is checked
// on every scenario by TestRecorderMatchesEngine; here each kind of node
// runs over random recordings with gaps, stale markers, NaNs, ties and
// label sets that only partly match, and what it leaves to the engine is
// left.
func TestNativeQueryMatchesEngine(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	stale := math.Float64frombits(value.StaleNaN)
	const step = 15 * time.Second
	b, err := Open(&File{Interval: step, Series: []Series{{Labels: labels.FromStrings("__name__", "x"), Samples: []Sample{{T: 0, F: 1}}}}})
	if err != nil {
		t.Fatal(err)
	}
	r := func(id string) string { return `{__hermes_recording__="` + id + `"}` }
	native := []string{
		r("0") + ` / ` + r("1"),
		r("0") + ` + ` + r("1") + ` offset 1m`,
		r("0") + ` - ` + r("1"),
		r("0") + ` * ` + r("2"),
		r("0") + ` < ` + r("1"),
		r("0") + ` <= ` + r("1"),
		r("0") + ` > ` + r("1"),
		r("0") + ` >= ` + r("1"),
		r("0") + ` == ` + r("1"),
		r("0") + ` != ` + r("1"),
		`0 * ` + r("0"),
		`2 - ` + r("0"),
		r("0") + ` - 2`,
		r("0") + ` / 0`,
		`(0.825 + 0.175 * ` + r("1") + `)`,
		r("0") + ` or ` + r("1"),
		`(` + r("0") + ` or 0 * ` + r("1") + `) / ` + r("2"),
		r("2") + ` offset 30m or ` + r("2"),
		`label_replace(` + r("0") + ` / ` + r("1") + `, "signal_part", "value", "", "") or label_replace(` + r("2") + `, "signal_part", "evidence", "", "")`,
		`min_over_time((` + r("0") + `)[2m:15s])`,
		`min_over_time((` + r("1") + `)[100s:15s]) / (` + r("2") + ` offset 30m or ` + r("2") + `)`,
		`min_over_time((` + r("0") + ` offset 1m)[2m:15s])`,
		r("0") + ` < (` + r("1") + ` offset 30m or ` + r("1") + `) or (` + r("1") + ` offset 30m or ` + r("1") + `)`,
		`sum by (route) (` + r("0") + `)`,
		`sum by (x) (` + r("1") + `) * 2`,
		`label_replace(sum by (route) (` + r("2") + `), "signal_part", "evidence", "", "")`,
		`sum by (route) (` + r("0") + `) / sum by (route) (` + r("1") + `)`,
		`sum(` + r("0") + `) or ` + r("1"),
	}
	// Evaluated natively only while no two series collide.
	colliding := []string{
		`label_replace(` + r("0") + `, "route", "z", "", "")`,
	}
	// Never evaluated natively.
	left := []string{
		r("0") + ` / on (route) ` + r("1"),
		r("0") + ` / ignoring (x) ` + r("1"),
		r("0") + ` / bool ` + r("1"),
		r("0") + ` < 1`,
		r("0") + ` and ` + r("1"),
		r("0") + ` unless ` + r("1"),
		r("0") + ` ^ ` + r("1"),
		r("0") + ` % ` + r("1"),
		`1 + 2`,
		`sum by (route) (` + r("0") + ` offset 1m)`,
		`avg by (route) (` + r("0") + `)`,
		`sum without (x) (` + r("0") + `)`,
		`label_replace(` + r("0") + `, "dst", "$1", "route", "(.*)")`,
		`label_replace(` + r("0") + `, "__name__", "x", "", "")`,
		`min_over_time((` + r("0") + `)[2m:30s])`,
		`min_over_time((` + r("0") + `)[2m:15s] offset 1m)`,
		`max_over_time((` + r("0") + `)[2m:15s])`,
		r("0") + ` @ 100`,
		`x / ` + r("0"),
		`{__hermes_recording__=~"0"}`,
		`{__hermes_recording__="9"}`,
	}
	ids := map[string]int{"0": 0, "1": 1, "2": 2}
	if nq, _ := compileNativeQuery(native[0], ids, step); nq == nil {
		t.Fatal("not compiled")
	} else if _, ok := nq.evaluate(nil, 1, 1+step.Milliseconds(), step.Milliseconds(), nil); ok {
		t.Error("evaluated a range that does not start at a multiple of the step")
	}
	for _, q := range left {
		if _, ok := compileNativeQuery(q, ids, step); ok {
			t.Errorf("%s: evaluated natively, want it left to the engine", q)
		}
	}
	for round := range 30 {
		recorded := make([][]*recSeries, 3)
		for i := range recorded {
			for _, route := range []string{"a", "b", "c"} {
				for _, x := range []string{"", "p"} {
					if rng.IntN(4) == 0 {
						continue
					}
					lb := labels.NewBuilder(labels.FromStrings("route", route))
					if x != "" {
						lb.Set("x", x)
					}
					samples := randomRecorded(rng, stale)
					for j := range samples {
						if !value.IsStaleNaN(samples[j].F) && rng.IntN(3) == 0 {
							samples[j].F = float64(rng.IntN(3)) // ties
						}
					}
					recorded[i] = append(recorded[i], &recSeries{labels: lb.Labels(), samples: samples})
				}
			}
			slices.SortFunc(recorded[i], func(x, y *recSeries) int { return labels.Compare(x.labels, y.labels) })
		}
		rec := &Recorder{b: b, series: recorded}
		arenas := &rec.arenas
		// Ranges start at multiples of the step, as the Recorder's do.
		from := int64(1_700_000_000_000)/step.Milliseconds()*step.Milliseconds() + int64(round)*step.Milliseconds()
		end := from + 200*step.Milliseconds()
		for _, q := range append(native, colliding...) {
			nq, ok := compileNativeQuery(q, ids, step)
			if !ok {
				t.Fatalf("%s: not evaluated natively", q)
			}
			// Through an arena that the round's earlier queries have
			// written over, as the Recorder's are.
			a := arenas.get()
			got, ok := nq.evaluate(recorded, from, end, step.Milliseconds(), a)
			arenas.put(a)
			if !ok {
				if slices.Contains(colliding, q) {
					continue // the engine fails on it
				}
				t.Fatalf("%s: declined", q)
			}
			if slices.Contains(colliding, q) && strings.Contains(q, `"route", "z"`) && len(got) > 1 {
				t.Fatalf("%s: evaluated %d series with the same labels", q, len(got))
			}
			sameMatrixAsEngine(t, b, rec, q, got, from, end, step)
		}
	}
}
