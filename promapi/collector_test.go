package promapi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
)

// TestCollectorAsFresh holds a Collector, kept from tick to tick,
// to a fresh Collector at every tick of a random run: routes added,
// removed, renamed and reordered, the same routes in a new slice, and
// the caller's slice written in place;
// signals reloaded (windows added and removed, a volume dropped, a signal
// gone, two signals sharing a query); answers missing routes, with
// repeated series, routes not configured, NaN, unknown parts, series in a
// new order, and queries failing after some series. A Collector kept
// InMemory (its queries one after the other) is held to it too.
func TestCollectorAsFresh(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	pool := config.DeriveSignals([]rules.SignalConfig{
		{Name: "p99", Query: "p99"},
		{Name: "soft", Query: "soft", Volume: "calls"},
		{Name: "hard", Query: "hard", Volume: "calls", Windows: []time.Duration{5 * time.Minute, 15 * time.Minute}},
		{Name: "hard_again", Query: "hard", Volume: "calls", Windows: []time.Duration{5 * time.Minute, 15 * time.Minute}},
		{Name: "ttft", Query: "ttft", Samples: "samples", Windows: []time.Duration{time.Hour}},
	})
	var c Collector
	inMemory := Collector{InMemory: true}
	routes := names("r", 40)
	signals := slices.Clone(pool)
	at := time.Unix(1_700_000_000, 0)
	clean := 0 // ticks without an error sample, where Errors must say 0
	for tick := range 300 {
		switch rng.IntN(12) {
		case 0: // a route joins or leaves
			if rng.IntN(2) == 0 && len(routes) > 1 {
				i := rng.IntN(len(routes))
				routes = slices.Delete(slices.Clone(routes), i, i+1)
			} else {
				routes = append(slices.Clone(routes), fmt.Sprintf("new-%d", tick))
			}
		case 1: // the same routes, reordered
			routes = slices.Clone(routes)
			rng.Shuffle(len(routes), func(i, j int) { routes[i], routes[j] = routes[j], routes[i] })
		case 2: // the same routes in a new slice
			routes = slices.Clone(routes)
		case 4: // the caller's slice written in place
			routes[rng.IntN(len(routes))] = fmt.Sprintf("renamed-%d", tick)
		case 3: // a reload: each signal kept, changed or dropped
			signals = nil
			for _, s := range pool {
				switch rng.IntN(5) {
				case 0:
					continue
				case 1:
					s.Windows = s.Windows[:rng.IntN(len(s.Windows)+1)]
				case 2:
					s.Volume, s.Samples = "", ""
				}
				signals = append(signals, s)
			}
			signals = config.DeriveSignals(signals)
		}
		answers := randomAnswers(rng, signals, routes)
		if rng.IntN(4) == 0 { // a healthy tick: no query fails, no route repeats
			answers = withoutErrors(answers)
		}
		query := func(_ context.Context, q string, _ time.Time, into *Answer) error {
			a := answers[q]
			for _, s := range a.series {
				into.Add(s.route, s.part, s.v)
			}
			return a.err
		}
		got := c.Collect(context.Background(), query, signals, routes, at, 0)
		want := new(Collector).Collect(context.Background(), query, signals, routes, at, 0)
		serial := inMemory.Collect(context.Background(), query, signals, routes, at, time.Millisecond)
		if !slices.Equal(got.Routes(), want.Routes()) {
			t.Fatalf("tick %d: routes %v, want %v", tick, got.Routes(), want.Routes())
		}
		errs := 0
		for _, r := range routes {
			for k, col := range rules.Columns(signals) {
				if g, w := got.Get(r, col), want.Get(r, col); !sameSample(g, w) {
					t.Fatalf("tick %d, route %s, column %s: %+v, want %+v", tick, r, col, g, w)
				}
				if g, w := serial.Get(r, col), want.Get(r, col); !sameSample(g, w) {
					t.Fatalf("tick %d, route %s, column %s, InMemory: %+v, want %+v", tick, r, col, g, w)
				}
				if k < len(signals) && got.Get(r, col).Status == evaluator.StatusError {
					errs++
				}
			}
		}
		if c.Errors() != errs || inMemory.Errors() != errs {
			t.Fatalf("tick %d: Errors() = %d (InMemory %d), the snapshot's signal columns hold %d errors", tick, c.Errors(), inMemory.Errors(), errs)
		}
		if errs == 0 {
			clean++
		}
		at = at.Add(15 * time.Second)
	}
	if clean == 0 {
		t.Error("no tick without an error: Errors() = 0 was never checked")
	}
}

// TestAnswerFits: a kept Answer serves again only for a query with the
// same evidence and windows; an uncounted answer has no windows.
func TestAnswerFits(t *testing.T) {
	p := newRoutePositions([]string{"a"})
	five, fifteen := []time.Duration{5 * time.Minute}, []time.Duration{15 * time.Minute}
	for _, c := range []struct {
		counted    bool
		windows    []time.Duration
		askCounted bool
		askWindows []time.Duration
		want       bool
	}{
		{true, five, true, five, true},
		{true, five, true, fifteen, false},
		{true, five, true, nil, false},
		{true, nil, true, five, false},
		{true, five, false, nil, false},
		{false, nil, true, nil, false},
		{false, nil, false, nil, true},
		{false, nil, false, five, true},
	} {
		if got := newAnswer(p, c.counted, c.windows).fits(c.askCounted, c.askWindows); got != c.want {
			t.Errorf("answer (counted %v, windows %v) fits (counted %v, windows %v): %v, want %v",
				c.counted, c.windows, c.askCounted, c.askWindows, got, c.want)
		}
	}
}

type testSeries struct {
	route, part string
	v           float64
}

type testAnswer struct {
	series []testSeries
	err    error
}

// randomAnswers answers each query of signals over routes, in a random
// order, with the faults TestCollectorAsFresh lists.
func randomAnswers(rng *rand.Rand, signals []rules.SignalConfig, routes []string) map[string]testAnswer {
	out := map[string]testAnswer{}
	for _, sig := range signals {
		q := sig.TickQuery()
		if _, ok := out[q]; ok {
			continue
		}
		parts := []string{""}
		if sig.EvidenceQuery() != "" {
			parts = []string{rules.PartValue, rules.PartEvidence}
			for _, w := range sig.Windows {
				parts = append(parts, rules.WindowPart(rules.PartValue, w), rules.WindowPart(rules.PartEvidence, w))
			}
			parts = append(parts, rules.PartValue+"_9m") // a window the signal does not declare
		}
		var a testAnswer
		order := rng.Perm(len(routes))
		for _, part := range parts {
			for _, i := range order {
				switch n := rng.IntN(20); {
				case n == 0: // no data
				case n == 1:
					a.series = append(a.series, testSeries{routes[i], part, 1}, testSeries{routes[i], part, 2})
				case n == 2:
					a.series = append(a.series, testSeries{routes[i], part, math.NaN()})
				case n == 3:
					a.series = append(a.series, testSeries{"unknown", part, 3})
				default:
					a.series = append(a.series, testSeries{routes[i], part, float64(rng.IntN(3))})
				}
			}
		}
		if rng.IntN(10) == 0 {
			a.series, a.err = a.series[:rng.IntN(len(a.series)+1)], errors.New("query failed")
		}
		out[q] = a
	}
	return out
}

// withoutErrors is answers without what makes an error sample: each
// query's error, and every series repeating a route and part.
func withoutErrors(answers map[string]testAnswer) map[string]testAnswer {
	out := map[string]testAnswer{}
	for q, a := range answers {
		seen := map[[2]string]bool{}
		var kept testAnswer
		for _, s := range a.series {
			if k := [2]string{s.route, s.part}; !seen[k] {
				seen[k] = true
				kept.series = append(kept.series, s)
			}
		}
		out[q] = kept
	}
	return out
}

// sameSample reports whether a and b are the same sample, NaN equal to NaN.
func sameSample(a, b evaluator.Sample) bool {
	same := func(x, y float64) bool { return x == y || math.IsNaN(x) && math.IsNaN(y) }
	return same(a.Value, b.Value) && same(a.Volume, b.Volume) && a.Status == b.Status && a.Reason == b.Reason && a.Counted == b.Counted
}

func names(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%d", prefix, i)
	}
	return out
}
