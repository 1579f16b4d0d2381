package backtest

import (
	"math"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/util/kahansum"
)

// nativeAgg is a recording over another recording, `sum by (...)` of it or
// `histogram_quantile(φ, ...)` of it, that the Recorder computes from the
// recorded series themselves instead of asking the engine. The engine
// selects the recorded series again at every step, hashes their labels and
// groups them anew; nativeAgg reads each series once per range and groups
// them once.
//
// It reproduces the engine's evaluation operation for operation: a
// selector's value at a step is the latest sample within the lookback
// delta unless that is a stale marker; sum adds the values of a group in
// the order the selector returns the series (label order), with the
// engine's Kahan summation (prometheus/util/kahansum), and
// histogram_quantile hands the buckets of a group, in that same order, to
// promql.BucketQuantile, the engine's own function. Its values are the
// engine's bit for bit; TestNativeAggMatchesEngine checks it. A recording
// whose series carry a metric name is left to the engine, which would drop
// it or fail on it. Hand-written because the engine exposes no way to
// evaluate an aggregation over series already in memory.
type nativeAgg struct {
	src string // id of the recording read
	// by are the grouping labels of a sum, sorted.
	by []string
	// quantile is φ of a histogram_quantile, when isQuantile.
	quantile   float64
	isQuantile bool

	// mu guards last, the groups of the series read last.
	mu   sync.Mutex
	last aggGroups
}

// nativeAggOf returns the nativeAgg that e is, if it is one.
func nativeAggOf(e parser.Expr) (*nativeAgg, bool) {
	switch n := e.(type) {
	case *parser.AggregateExpr:
		src, ok := recordingRead(n.Expr)
		if !ok || n.Op != parser.SUM || n.Without || n.Param != nil || slices.Contains(n.Grouping, labels.MetricName) {
			return nil, false
		}
		by := slices.Clone(n.Grouping)
		slices.Sort(by)
		return &nativeAgg{src: src, by: slices.Compact(by)}, true
	case *parser.Call:
		if n.Func.Name != "histogram_quantile" || len(n.Args) != 2 {
			return nil, false
		}
		q, ok := n.Args[0].(*parser.NumberLiteral)
		if !ok {
			return nil, false
		}
		src, ok := recordingRead(n.Args[1])
		if !ok {
			return nil, false
		}
		return &nativeAgg{src: src, quantile: q.Val, isQuantile: true}, true
	}
	return nil, false
}

// recordingRead returns the id of the recording e selects, if e is a
// plain selector of one: no other matcher, no offset, no @.
func recordingRead(e parser.Expr) (string, bool) {
	vs, ok := e.(*parser.VectorSelector)
	if !ok || len(vs.LabelMatchers) != 1 || vs.OriginalOffset != 0 || vs.OriginalOffsetExpr != nil || vs.Timestamp != nil || vs.StartOrEnd != 0 || vs.Anchored || vs.Smoothed {
		return "", false
	}
	m := vs.LabelMatchers[0]
	if m.Name != recordingLabel || m.Type != labels.MatchEqual {
		return "", false
	}
	return m.Value, true
}

// aggGroup is a group of a nativeAgg's series.
type aggGroup struct {
	labels  labels.Labels
	members []int // indices into the series read, in order
}

// aggGroups is how a nativeAgg grouped the series it read last.
type aggGroups struct {
	in     []*recSeries
	groups []*aggGroup
	uppers []float64
	ok     bool
}

// group returns the groups of in, the upper bound of each bucket series
// for a quantile, and whether the nativeAgg can evaluate them. A recorded
// series keeps its place (its recSeries) from range to range, and the
// series read are mostly the same ones: grouping them again built their
// labels anew for every range (a sixth of the aggregations' CPU), so the
// groups of the series read last are kept and reused while they are the
// same series.
func (a *nativeAgg) group(in []*recSeries) ([]*aggGroup, []float64, bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.last.in != nil && slices.Equal(a.last.in, in) {
		return a.last.groups, a.last.uppers, a.last.ok
	}
	var (
		groups  []*aggGroup
		byKey   = map[string]*aggGroup{}
		uppers  = make([]float64, len(in))
		builder labels.Builder
		key     []byte // a group's labels.Bytes: a lookup allocates nothing
	)
	for i, s := range in {
		if s.labels.Has(labels.MetricName) {
			a.last = aggGroups{in: slices.Clone(in)}
			return nil, nil, false
		}
		var lbls labels.Labels
		if a.isQuantile {
			le := s.labels.Get(labels.BucketLabel)
			u, err := strconv.ParseFloat(le, 64)
			if err != nil || math.IsNaN(u) {
				continue // the engine skips it with a warning
			}
			uppers[i] = u
			builder.Reset(s.labels)
			lbls = builder.Del(labels.BucketLabel).Labels()
		} else {
			builder.Reset(s.labels)
			lbls = builder.Keep(a.by...).Labels()
		}
		key = lbls.Bytes(key)
		g := byKey[string(key)]
		if g == nil {
			g = &aggGroup{labels: lbls}
			byKey[string(key)] = g
			groups = append(groups, g)
		}
		g.members = append(g.members, i)
	}
	a.last = aggGroups{in: slices.Clone(in), groups: groups, uppers: uppers, ok: true}
	return groups, uppers, true
}

// evaluate returns the recording over [from, end] at step, reading the
// series of the recording it aggregates (in label order), as the engine's
// range query would, in label order; ok is false where the engine must
// evaluate it instead.
//
// The points are carved from scr's memory when scr is not nil (else from
// new arrays): they are then only valid until the next call with scr.
func (a *nativeAgg) evaluate(in []*recSeries, from, end, step int64, scr *pointScratch) (m promql.Matrix, ok bool) {
	steps := int((end-from)/step) + 1
	groups, uppers, ok := a.group(in)
	if !ok {
		return nil, false
	}
	// Group by group, the value of each member at every step as the
	// engine's selector sees it, in buffers the groups share; the points of
	// all groups in one block.
	width := 0
	for _, g := range groups {
		width = max(width, len(g.members))
	}
	vals, has := scr.steps(width * steps)
	block := scr.block(len(groups) * steps)
	var buckets promql.Buckets
	for _, g := range groups {
		for x, i := range g.members {
			selectSteps(in[i].samples, from, step, vals[x*steps:(x+1)*steps], has[x*steps:(x+1)*steps])
		}
		pts := block[len(block):len(block)]
		for k := range steps {
			found := false
			var sum, c float64
			buckets = buckets[:0]
			for x, i := range g.members {
				if !has[x*steps+k] {
					continue
				}
				f := vals[x*steps+k]
				switch {
				case a.isQuantile:
					buckets = append(buckets, promql.Bucket{UpperBound: uppers[i], Count: f})
				case !found:
					sum = f
				default:
					sum, c = kahansum.Inc(f, sum, c)
				}
				found = true
			}
			if !found {
				continue
			}
			v := sum + c
			if a.isQuantile {
				v, _, _, _, _, _ = promql.BucketQuantile(a.quantile, buckets)
			}
			pts = append(pts, promql.FPoint{T: from + int64(k)*step, F: v})
		}
		if len(pts) > 0 {
			block = block[:len(block)+len(pts)]
			m = append(m, promql.Series{Metric: g.labels, Floats: pts[:len(pts):len(pts)]})
		}
	}
	slices.SortFunc(m, func(x, y promql.Series) int { return labels.Compare(x.Metric, y.Metric) })
	return m, true
}

// selectSteps sets vals and has, per step from from on, to the value an
// instant selector returns there: the latest sample at or before the step
// and after the lookback delta before it, unless a stale marker.
//
// A recording keeps its samples as far back as its readers read it, up to
// an hour and more before from, and holds one sample per step: so the
// latest sample at or before from is found by a binary search, not a walk
// through those before, and a step whose sample is the next one takes it
// without the lookback's test (a sample at the step itself is the latest,
// and within the lookback delta).
func selectSteps(samples []Sample, from, step int64, vals []float64, has []bool) {
	lookback := lookbackDelta.Milliseconds()
	// The latest sample at or before the step.
	j := sort.Search(len(samples), func(j int) bool { return samples[j].T > from }) - 1
	for k := range vals {
		t := from + int64(k)*step
		if j+1 < len(samples) && samples[j+1].T == t && (j+2 == len(samples) || samples[j+2].T > t) {
			j++
			f := samples[j].F
			has[k] = !value.IsStaleNaN(f)
			vals[k] = f // read only where has says so
			continue
		}
		for j+1 < len(samples) && samples[j+1].T <= t {
			j++
		}
		has[k] = j >= 0 && samples[j].T > t-lookback && !value.IsStaleNaN(samples[j].F)
		if has[k] {
			vals[k] = samples[j].F
		}
	}
}

// splitNativeAggs records apart every nativeAgg that a query of plan reads
// directly, as a recording one level above the recording it aggregates:
// where the planner left it in the query because the query alone reads
// it, the engine would otherwise evaluate it there.
//
// Only an aggregation that no aggregation encloses is split, as the planner
// records nothing an aggregation encloses (an aggregation adds its inputs
// in the order they come, a recording comes in label order), and only
// inside subqueries that step in multiples of step without an offset:
// then the query reads the recording exactly at the steps it is recorded.
// The recording it aggregates is already kept as far back as the query
// read it there.
func splitNativeAggs(plan *recordingPlan, queries []string, step, subqueryStep time.Duration) {
	pl := &planner{p: parser.NewParser(parser.Options{}), step: step, subqueryStep: subqueryStep}
	byID := map[string]*recording{}
	for _, r := range plan.recs {
		byID[r.id] = r
	}
	byKey := map[string]*recording{}
	for _, q := range queries {
		text, ok := plan.rewrite[q]
		if !ok {
			continue // reads no recording
		}
		e, err := pl.p.ParseExpr(text)
		if err != nil {
			continue
		}
		rw := pl.walk(e, nil, func(n parser.Expr, path []parser.Node) parser.Expr {
			a, ok := nativeAggOf(n)
			if !ok {
				return nil
			}
			back, ok := pl.subqueryReach(path)
			src := byID[a.src]
			if !ok || src == nil || src.back < back {
				return nil
			}
			key := n.String()
			r := byKey[key]
			if r == nil {
				r = &recording{id: strconv.Itoa(len(plan.recs)), expr: key, level: src.level + 1}
				plan.recs = append(plan.recs, r)
				byKey[key], byID[r.id] = r, r
			}
			r.back = max(r.back, back)
			return &parser.VectorSelector{LabelMatchers: []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, recordingLabel, r.id)}}
		}).String()
		plan.rewrite[q] = rw
	}
}

// subqueryReach returns how far back of the evaluation time an expression
// with ancestors path is read: the ranges of the subqueries around it and
// one subquery step each. ok is false if an aggregation is around it, or a
// subquery with an offset or a step that is not a multiple of the
// recording step.
func (pl *planner) subqueryReach(path []parser.Node) (back time.Duration, ok bool) {
	for _, a := range path {
		switch a := a.(type) {
		case *parser.AggregateExpr:
			return 0, false
		case *parser.SubqueryExpr:
			s := pl.subStep(a)
			if a.OriginalOffset != 0 || s%pl.step != 0 {
				return 0, false
			}
			back += a.Range + s
		}
	}
	return back, true
}
