package backtest

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
)

// evaluate returns the query over [from, end] at step, as the engine's
// range query would (series in label order, each with its points), from
// the recorded series; ok is false where the engine must evaluate it.
// from must be a multiple of step, as the Recorder's ranges are: a
// subquery's points are then the range's steps. a (nil for new arrays)
// holds the evaluation's values, not the matrix.
func (q *nativeQuery) evaluate(recorded [][]*recSeries, from, end, step int64, a *nqArena) (promql.Matrix, bool) {
	out, ok := q.evaluateSteps(recorded, from, end, step, a)
	if !ok {
		return nil, false
	}
	m := make(promql.Matrix, 0, len(out))
	for _, s := range out {
		n := 0
		for _, h := range s.has {
			if h {
				n++
			}
		}
		pts := make([]promql.FPoint, 0, n)
		for k, h := range s.has {
			if h {
				pts = append(pts, promql.FPoint{T: from + int64(k)*step, F: s.vals[k]})
			}
		}
		m = append(m, promql.Series{Metric: s.labels, Floats: pts})
	}
	return m, true
}

// evaluateSteps is evaluate with each series's value at every step of the
// range (has says where it has one), as the matrix holds them: the series
// in label order, only those with a value somewhere. Their values are
// carved from a (nil for new arrays) and valid until it is put back.
func (q *nativeQuery) evaluateSteps(recorded [][]*recSeries, from, end, step int64, a *nqArena) ([]nqSeries, bool) {
	if from%step != 0 {
		return nil, false
	}
	steps := int((end-from)/step) + 1
	out, ok := q.root.eval(recorded, from, step, steps, a)
	if !ok {
		return nil, false
	}
	slices.SortFunc(out, func(x, y nqSeries) int { return labels.Compare(x.labels, y.labels) })
	for i := 1; i < len(out); i++ {
		if labels.Equal(out[i].labels, out[i-1].labels) {
			return nil, false // the engine reports the same labels twice
		}
	}
	return slices.DeleteFunc(out, func(s nqSeries) bool { return !slices.Contains(s.has, true) }), true
}

// eval returns the node's series over steps steps from from, their values
// carved from a. A number's node is only ever an operand, read by its
// parent.
func (n *nqNode) eval(recorded [][]*recSeries, from, step int64, steps int, a *nqArena) ([]nqSeries, bool) {
	switch n.kind {
	case nqSelect:
		return selectRecording(recorded[n.rec], from-n.offset, step, steps, a)
	case nqMinOverTime:
		return n.minOverTime(recorded, from, step, steps, a)
	case nqAgg:
		m, ok := n.agg.evaluate(recorded[n.rec], from, from+int64(steps-1)*step, step, nil)
		if !ok {
			return nil, false
		}
		out := make([]nqSeries, len(m))
		for i, s := range m {
			out[i] = nqSeries{labels: s.Metric, vals: a.floats(steps), has: a.bools(steps)}
			for _, p := range s.Floats {
				k := (p.T - from) / step
				out[i].vals[k], out[i].has[k] = p.F, true
			}
		}
		return out, true
	case nqScalarLeft, nqScalarRight:
		vec := n.lhs
		if n.kind == nqScalarLeft {
			vec = n.rhs
		}
		ss, ok := vec.eval(recorded, from, step, steps, a)
		if !ok {
			return nil, false
		}
		for i := range ss {
			for k, v := range ss[i].vals {
				if n.kind == nqScalarLeft {
					ss[i].vals[k] = arith(n.op, n.lhs.num, v)
				} else {
					ss[i].vals[k] = arith(n.op, v, n.rhs.num)
				}
			}
		}
		return ss, true
	case nqLabelReplace:
		ss, ok := n.lhs.eval(recorded, from, step, steps, a)
		if !ok {
			return nil, false
		}
		var b labels.Builder
		for i := range ss {
			b.Reset(ss[i].labels)
			ss[i].labels = b.Set(n.dst, n.val).Labels()
		}
		return ss, !duplicateLabels(ss)
	case nqOr, nqBinary:
		lhs, ok := n.lhs.eval(recorded, from, step, steps, a)
		if !ok {
			return nil, false
		}
		rhs, ok := n.rhs.eval(recorded, from, step, steps, a)
		if !ok {
			return nil, false
		}
		if n.kind == nqOr {
			return or(lhs, rhs), true
		}
		return binary(n.op, lhs, rhs)
	}
	return nil, false
}

// selectRecording returns the series of a recording as a selector sees
// them at steps steps from from; not ok if a series has a reserved label.
func selectRecording(in []*recSeries, from, step int64, steps int, a *nqArena) ([]nqSeries, bool) {
	out := make([]nqSeries, len(in))
	vals := a.floats(len(in) * steps)
	has := a.bools(len(in) * steps)
	for i, s := range in {
		reserved := false
		s.labels.Range(func(l labels.Label) { reserved = reserved || strings.HasPrefix(l.Name, "__") })
		if reserved {
			return nil, false
		}
		out[i] = nqSeries{labels: s.labels, vals: vals[i*steps : (i+1)*steps], has: has[i*steps : (i+1)*steps]}
		selectSteps(s.samples, from, step, out[i].vals, out[i].has)
	}
	return out, true
}

// minOverTime is min_over_time((recording)[rng:step]): at each step, the
// least of the recording's values at the steps in (t-rng, t], compared in
// time order as the engine does.
func (n *nqNode) minOverTime(recorded [][]*recSeries, from, step int64, steps int, a *nqArena) ([]nqSeries, bool) {
	// The subquery's points start at the first step after from-rng.
	back := int(n.rng / step)
	if n.rng%step == 0 {
		back--
	}
	in, ok := n.lhs.eval(recorded, from-int64(back)*step, step, steps+back, a)
	if !ok {
		return nil, false
	}
	out := make([]nqSeries, len(in))
	for i, s := range in {
		o := nqSeries{labels: s.labels, vals: a.floats(steps), has: a.bools(steps)}
		for k := range steps {
			found := false
			var least float64
			for j := k; j <= k+back; j++ {
				if !s.has[j] {
					continue
				}
				if f := s.vals[j]; !found || f < least || math.IsNaN(least) {
					least = f
				}
				found = true
			}
			o.vals[k], o.has[k] = least, found
		}
		out[i] = o
	}
	return out, true
}

// binary is lhs op rhs between two vectors, series paired by labels.
// Series are keyed by their labels' encoding (labels.Labels.Bytes), not
// their text: a lookup through it allocates nothing, and the text was a
// seventh of a 24 h fleet backtest's allocations.
func binary(op parser.ItemType, lhs, rhs []nqSeries) ([]nqSeries, bool) {
	if duplicateLabels(lhs) || duplicateLabels(rhs) {
		return nil, false
	}
	byLabels := make(map[string]int, len(rhs))
	var key []byte
	for j, s := range rhs {
		key = s.labels.Bytes(key)
		byLabels[string(key)] = j
	}
	var out []nqSeries
	for _, l := range lhs {
		key = l.labels.Bytes(key)
		j, ok := byLabels[string(key)]
		if !ok {
			continue
		}
		r := rhs[j]
		o := nqSeries{labels: l.labels, vals: l.vals, has: l.has}
		for k := range o.has {
			if !l.has[k] || !r.has[k] {
				o.has[k] = false
				continue
			}
			if v, keep := binop(op, l.vals[k], r.vals[k]); keep {
				o.vals[k] = v
			} else {
				o.has[k] = false
			}
		}
		out = append(out, o)
	}
	return out, true
}

// or is lhs or rhs: the left series where they have a value, and the right
// ones whose labels the left lacks at that step.
func or(lhs, rhs []nqSeries) []nqSeries {
	byLabels := make(map[string]int, len(lhs))
	var key []byte
	for i, s := range lhs {
		key = s.labels.Bytes(key)
		byLabels[string(key)] = i
	}
	out := lhs
	for _, r := range rhs {
		key = r.labels.Bytes(key)
		i, ok := byLabels[string(key)]
		if !ok {
			out = append(out, r)
			continue
		}
		l := lhs[i]
		for k, h := range r.has {
			if h && !l.has[k] {
				l.vals[k], l.has[k] = r.vals[k], true
			}
		}
	}
	return out
}

// duplicateLabels says whether two series have the same labels.
func duplicateLabels(ss []nqSeries) bool {
	seen := make(map[string]bool, len(ss))
	var key []byte
	for _, s := range ss {
		key = s.labels.Bytes(key)
		if seen[string(key)] {
			return true
		}
		seen[string(key)] = true
	}
	return false
}

// binop is the engine's lhs op rhs between two floats: the value, and for
// a comparison whether the left value is kept.
func binop(op parser.ItemType, lhs, rhs float64) (float64, bool) {
	switch op {
	case parser.EQLC:
		return lhs, lhs == rhs
	case parser.NEQ:
		return lhs, lhs != rhs
	case parser.GTR:
		return lhs, lhs > rhs
	case parser.LSS:
		return lhs, lhs < rhs
	case parser.GTE:
		return lhs, lhs >= rhs
	case parser.LTE:
		return lhs, lhs <= rhs
	}
	return arith(op, lhs, rhs), true
}

// arith is the engine's arithmetic between two floats.
func arith(op parser.ItemType, lhs, rhs float64) float64 {
	switch op {
	case parser.ADD:
		return lhs + rhs
	case parser.SUB:
		return lhs - rhs
	case parser.MUL:
		return lhs * rhs
	case parser.DIV:
		return lhs / rhs
	}
	panic("backtest: arith of " + strconv.Quote(op.String()))
}

// nqArena hands out the value arrays of one native evaluation from blocks
// it keeps for the next, zeroed as new arrays are. The evaluations of a
// 24 h, 100-route backtest allocated 0.7 GB of arrays (selectRecording
// most of them), each dropped once fetch had laid the values out by tick
// or store had copied them. A block is never grown in place, as arrays
// carved from it are in use: a larger one replaces it, and after a few
// ranges one block holds an evaluation.
type nqArena struct {
	f []float64
	b []bool
}

// nqArenas keeps the arenas between evaluations, which may run at once
// (a sync.Pool would drop them at every other collection, several times a
// range).
type nqArenas struct {
	mu   sync.Mutex
	free []*nqArena
}

// get returns an arena, empty.
func (p *nqArenas) get() *nqArena {
	p.mu.Lock()
	defer p.mu.Unlock()
	if n := len(p.free); n > 0 {
		a := p.free[n-1]
		p.free = p.free[:n-1]
		a.f, a.b = a.f[:0], a.b[:0]
		return a
	}
	return new(nqArena)
}

// put gives a back: nothing carved from it may be used after.
func (p *nqArenas) put(a *nqArena) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.free = append(p.free, a)
}

// floats returns n zeroed float64s from a, or new ones when a is nil.
func (a *nqArena) floats(n int) []float64 {
	if a == nil {
		return make([]float64, n)
	}
	return carve(&a.f, n)
}

// bools returns n false bools from a, or new ones when a is nil.
func (a *nqArena) bools(n int) []bool {
	if a == nil {
		return make([]bool, n)
	}
	return carve(&a.b, n)
}

// carve returns the next n zeroed elements of *buf, growing it (to twice
// its capacity, or n) when it holds fewer free ones; earlier carvings
// keep the old array.
func carve[T any](buf *[]T, n int) []T {
	b := *buf
	if cap(b)-len(b) < n {
		b = make([]T, 0, max(2*cap(b), n))
	}
	s := b[len(b) : len(b)+n : len(b)+n]
	*buf = b[:len(b)+n]
	clear(s)
	return s
}
