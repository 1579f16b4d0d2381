package backtest

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
)

// counterRate is a recording of rate or increase over a selector of loaded
// series, without offset, which the Recorder computes itself over a whole
// range instead of asking the engine. The engine rescans every sample of
// the window at every step (240 samples of an hour at 15 s, for every
// histogram bucket); counterRate slides the window over each series once,
// two indices moving forward, and keeps the counter resets in a list, so
// a step costs the resets inside its window, usually none.
//
// It reproduces promql's extrapolatedRate for float samples without start
// timestamps (the backtest engine does not enable them) operation for
// operation, the resets added in the same order, so its values are the
// engine's bit for bit; TestCounterRateMatchesEngine checks it. Anything
// else (native histograms, @, anchored or smoothed selectors, offsets,
// recordings of recordings) is left to the engine. Hand-written because the
// engine exposes no incremental form of its range functions.
type counterRate struct {
	matchers []*labels.Matcher
	rng      int64 // window in milliseconds
	isRate   bool
	rangeSec float64 // window in seconds, as the engine divides by it
}

// splitCounterRates records apart every rate or increase of a loaded
// counter that a recording of plan or one of the queries reads (one per
// distinct expression), as a recording at level 0 read by the others, and
// returns per recording its counterRate, or nil where the engine evaluates
// it.
//
// Only a rate outside any subquery, of a selector naming one metric, is
// split: the recording is then read exactly when and where the rate was
// evaluated, and its series come in the order the engine's selector gave
// them (label order, all with the same name), so an aggregation around it
// adds the same values in the same order.
func splitCounterRates(plan *recordingPlan, queries []string) []*counterRate {
	var (
		rates = make([]*counterRate, len(plan.recs))
		byKey = map[string]*recording{}
		added []*recording
		walk  planner
	)
	split := func(e parser.Expr, back time.Duration) string {
		return walk.walk(e, nil, func(n parser.Expr, path []parser.Node) parser.Expr {
			if _, ok := counterRateOf(n); !ok || slices.ContainsFunc(path, isSubquery) || !namesOneMetric(n) {
				return nil
			}
			key := n.String()
			r, ok := byKey[key]
			if !ok {
				r = &recording{id: strconv.Itoa(len(plan.recs) + len(added)), expr: key}
				byKey[key] = r
				added = append(added, r)
			}
			r.back = max(r.back, back)
			return &parser.VectorSelector{LabelMatchers: []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, recordingLabel, r.id)}}
		}).String()
	}
	p := parser.NewParser(parser.Options{})
	for i, r := range plan.recs {
		e, err := p.ParseExpr(r.expr)
		if err != nil {
			continue
		}
		if c, ok := counterRateOf(e); ok {
			rates[i] = c // itself a counter rate
			continue
		}
		r.expr = split(e, r.back)
	}
	for _, q := range queries {
		e, err := p.ParseExpr(q)
		if err != nil || !rewritable(e) {
			continue
		}
		if rw, ok := plan.rewrite[q]; ok {
			if e, err = p.ParseExpr(rw); err != nil {
				continue
			}
		}
		was := e.String()
		if rw := split(e, 0); rw != was {
			plan.rewrite[q] = rw
		}
	}
	if len(added) == 0 {
		return rates
	}
	// The split recordings come first: every other one moves a level up.
	for _, r := range plan.recs {
		r.level++
	}
	for _, r := range added {
		e, _ := p.ParseExpr(r.expr)
		c, _ := counterRateOf(e)
		plan.recs = append(plan.recs, r)
		rates = append(rates, c)
	}
	return rates
}

// isSubquery says whether n is a subquery.
func isSubquery(n parser.Node) bool {
	_, ok := n.(*parser.SubqueryExpr)
	return ok
}

// namesOneMetric says whether the selector of the counter rate e matches
// __name__ to one name.
func namesOneMetric(e parser.Expr) bool {
	vs := e.(*parser.Call).Args[0].(*parser.MatrixSelector).VectorSelector.(*parser.VectorSelector)
	return slices.ContainsFunc(vs.LabelMatchers, func(m *labels.Matcher) bool {
		return m.Name == labels.MetricName && m.Type == labels.MatchEqual
	})
}

// counterRateOf returns the counterRate that e is, if it is one.
func counterRateOf(e parser.Expr) (*counterRate, bool) {
	call, ok := e.(*parser.Call)
	if !ok || (call.Func.Name != "rate" && call.Func.Name != "increase") || len(call.Args) != 1 {
		return nil, false
	}
	ms, ok := call.Args[0].(*parser.MatrixSelector)
	if !ok || ms.RangeExpr != nil || ms.Range <= 0 {
		return nil, false
	}
	vs, ok := ms.VectorSelector.(*parser.VectorSelector)
	if !ok || vs.OriginalOffset != 0 || vs.OriginalOffsetExpr != nil || vs.Timestamp != nil || vs.StartOrEnd != 0 || vs.Anchored || vs.Smoothed {
		return nil, false
	}
	for _, m := range vs.LabelMatchers {
		if m.Name == recordingLabel {
			return nil, false
		}
	}
	return &counterRate{matchers: vs.LabelMatchers, rng: ms.Range.Milliseconds(), isRate: call.Func.Name == "rate", rangeSec: ms.Range.Seconds()}, true
}

// evaluate returns the recording over [from, end] at step as the engine's
// range query would, in label order, reading the loaded series from dec
// (nil to decode them here); ok is false where the engine must evaluate it
// instead. series are the loaded series that c's matchers select, in
// label order (matchingSeries): the Recorder selects them once, not once
// per range (a tenth of the rates' CPU).
//
// The points are carved from scr's block when scr is not nil (else from
// a new one): they are then only valid until the next call with scr.
func (c *counterRate) evaluate(ctx context.Context, series []*chunkedSeries, dec *decodedWindow, from, end, step int64, scr *pointScratch) (m promql.Matrix, ok bool, err error) {
	var (
		samples, buf []Sample
		resets       []int
		seen         = map[uint64]bool{}
	)
	block := scr.block(len(series) * int((end-from)/step+1))
	// The series the engine's selector over [from-rng, end] returns: those
	// matching with a chunk in that range, in label order.
	for _, s := range series {
		if len(s.overlapping(from-c.rng, end)) == 0 {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, false, fmt.Errorf("recording rate: %w", err)
		}
		all, floats, err := dec.samples(s, from-c.rng, end)
		if err != nil {
			return nil, false, fmt.Errorf("recording rate of %s: %w", s.labels, err)
		}
		if !floats {
			return nil, false, nil
		}
		// The samples without stale markers: those decoded, unless a
		// series ended or restarted in the window (copying every series's
		// samples was a tenth of the rates' CPU).
		samples = all
		if slices.ContainsFunc(all, isStale) {
			samples = buf[:0]
			for _, p := range all {
				if !value.IsStaleNaN(p.F) {
					samples = append(samples, p)
				}
			}
			buf = samples
		}
		lbls := s.labels.DropMetricName()
		h := lbls.Hash()
		if seen[h] {
			return nil, false, nil // the engine reports duplicate series
		}
		seen[h] = true
		resets = resets[:0]
		for j := 1; j < len(samples); j++ {
			if samples[j].F < samples[j-1].F {
				resets = append(resets, j)
			}
		}
		pts := block[len(block):len(block)]
		lo, hi, r := 0, 0, 0
		for t := from; t <= end; t += step {
			for hi < len(samples) && samples[hi].T <= t {
				hi++
			}
			for lo < hi && samples[lo].T <= t-c.rng {
				lo++
			}
			if hi-lo < 2 {
				continue
			}
			for r < len(resets) && resets[r] <= lo {
				r++
			}
			pts = append(pts, promql.FPoint{T: t, F: c.at(samples[lo:hi], resets[r:], lo, t)})
		}
		if len(pts) > 0 {
			block = block[:len(block)+len(pts)]
			m = append(m, promql.Series{Metric: lbls, Floats: pts[:len(pts):len(pts)]})
		}
	}
	sort.Sort(m)
	return m, true, nil
}

// pointScratch is the memory a recording's evaluations reuse from one
// range to the next: Recorder.store copies what they return, so the next
// range may overwrite it. Counter rates allocated 1.1 GB of points over
// the 24 h, 100-route backtest, a point array per series per range,
// dropped as soon as it was copied, and the native aggregations 0.7 GB.
type pointScratch struct {
	points []promql.FPoint
	vals   []float64
	has    []bool
}

// block returns an empty slice with room for n points: scr's, or a new
// one when scr is nil.
func (scr *pointScratch) block(n int) []promql.FPoint {
	if scr == nil {
		return make([]promql.FPoint, 0, n)
	}
	if cap(scr.points) < n {
		scr.points = make([]promql.FPoint, 0, n)
	}
	return scr.points[:0]
}

// steps returns vals and has of n each, scr's or new ones when scr is nil;
// has is all false, vals is read only where has is true.
func (scr *pointScratch) steps(n int) ([]float64, []bool) {
	if scr == nil {
		return make([]float64, n), make([]bool, n)
	}
	if cap(scr.vals) < n {
		scr.vals, scr.has = make([]float64, n), make([]bool, n)
	}
	has := scr.has[:n]
	clear(has)
	return scr.vals[:n], has
}

// isStale says whether p is a stale marker.
func isStale(p Sample) bool { return value.IsStaleNaN(p.F) }

// at is extrapolatedRate at t of the window w (at least two samples),
// which starts at index lo of its series; resets are the indices of the
// series' resets from the first one after lo on.
func (c *counterRate) at(w []Sample, resets []int, lo int, t int64) float64 {
	n := len(w) - 1
	rangeStart, rangeEnd := t-c.rng, t
	firstT, lastT := w[0].T, w[n].T
	result := w[n].F - w[0].F
	for _, r := range resets {
		if r >= lo+len(w) {
			break
		}
		result += w[r-lo-1].F
	}
	durationToStart := float64(firstT-rangeStart) / 1000
	durationToEnd := float64(rangeEnd-lastT) / 1000
	sampledInterval := float64(lastT-firstT) / 1000
	averageDurationBetweenSamples := sampledInterval / float64(n)
	extrapolationThreshold := averageDurationBetweenSamples * 1.1
	if durationToStart >= extrapolationThreshold {
		durationToStart = averageDurationBetweenSamples / 2
	}
	durationToZero := durationToStart
	if result > 0 && w[0].F >= 0 {
		durationToZero = sampledInterval * (w[0].F / result)
	}
	if durationToZero < durationToStart {
		durationToStart = durationToZero
	}
	if durationToEnd >= extrapolationThreshold {
		durationToEnd = averageDurationBetweenSamples / 2
	}
	factor := 1.0
	if sampledInterval != 0 {
		factor = (sampledInterval + durationToStart + durationToEnd) / sampledInterval
	}
	if c.isRate {
		factor /= c.rangeSec
	}
	return result * factor
}
