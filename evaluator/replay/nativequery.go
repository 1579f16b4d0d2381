package replay

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
)

// nativeQuery is a query rewritten to read recordings that the Recorder
// answers from the recorded series themselves instead of asking the
// engine: arithmetic, comparisons and `or` between recordings and numbers,
// the constant label_replace that marks a signal's parts (rules.TickQuery),
// min_over_time of a recording's subquery, and the sums and quantiles of a
// recording that nativeAgg evaluates. The Recorder evaluates the
// recordings that are such expressions the same way. Once the recordings hold
// the expensive parts, the engine's work on such a query is its per-step
// machinery (gathering each input's samples, hashing every output
// series' labels at every step), which took a third of a 100-route
// backtest's CPU; nativeQuery pairs the series of two operands once per
// range and then works on arrays of values.
//
// It reproduces the engine's evaluation operation for operation: a
// selector's value at a step is selectSteps' (the engine's lookback); a
// binary operation between two vectors pairs series with equal labels
// (one-to-one, no on/ignoring), computes lhs op rhs, and for a comparison
// keeps the left value where it holds; between a number and a vector it
// keeps the operands' order; `or` keeps the left series at a step and the
// right ones whose labels the left does not have there; min_over_time
// walks a subquery's points in time order with the engine's comparison.
// Anything else, and any series whose labels the engine would treat
// specially (a name or another reserved label) or that would collide, is
// left to the engine: evaluate then says not ok. TestNativeQueryMatchesEngine
// checks it bit for bit. Hand-written because the engine exposes no way to
// evaluate an expression over series already in memory other than through
// its per-step loop.
type nativeQuery struct {
	root *nqNode
}

// nqKind is the kind of a node of a nativeQuery.
type nqKind int

const (
	nqSelect       nqKind = iota // a recording, with an offset
	nqNumber                     // a number literal, as an operand
	nqBinary                     // vector op vector
	nqScalarLeft                 // number op vector
	nqScalarRight                // vector op number
	nqOr                         // vector or vector
	nqLabelReplace               // label_replace(v, dst, repl, "", "")
	nqMinOverTime                // min_over_time((recording)[range:step])
	nqAgg                        // a nativeAgg of a recording
)

// nqNode is one node of a nativeQuery.
type nqNode struct {
	kind     nqKind
	rec      int   // recording index (nqSelect)
	offset   int64 // milliseconds (nqSelect)
	num      float64
	op       parser.ItemType
	lhs, rhs *nqNode
	dst, val string // nqLabelReplace
	rng      int64  // subquery range in milliseconds (nqMinOverTime)
	agg      *nativeAgg
}

// nqSeries is one series of a node's value over a range: per step, its
// value and whether it has one.
type nqSeries struct {
	labels labels.Labels
	vals   []float64
	has    []bool
}

// labelName is what label_replace accepts as a destination label.
var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// compileNativeQuery returns the nativeQuery of the rewritten query text,
// ok false if it holds anything nativeQuery does not evaluate. ids maps a
// recording's id to its index; step is the recording step.
func compileNativeQuery(text string, ids map[string]int, step time.Duration) (*nativeQuery, bool) {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(text)
	if err != nil {
		return nil, false
	}
	n, ok := compileNQ(e, ids, step)
	if !ok || n.kind == nqNumber {
		return nil, false
	}
	return &nativeQuery{root: n}, true
}

// compileNQ compiles e, ok false if nativeQuery does not evaluate it.
func compileNQ(e parser.Expr, ids map[string]int, step time.Duration) (*nqNode, bool) {
	switch n := e.(type) {
	case *parser.ParenExpr:
		return compileNQ(n.Expr, ids, step)
	case *parser.NumberLiteral:
		return &nqNode{kind: nqNumber, num: n.Val}, true
	case *parser.VectorSelector:
		return compileSelect(n, ids, step)
	case *parser.AggregateExpr:
		return compileAgg(n, ids)
	case *parser.BinaryExpr:
		if n.ReturnBool {
			return nil, false
		}
		lhs, ok := compileNQ(n.LHS, ids, step)
		if !ok {
			return nil, false
		}
		rhs, ok := compileNQ(n.RHS, ids, step)
		if !ok {
			return nil, false
		}
		arith := n.Op == parser.ADD || n.Op == parser.SUB || n.Op == parser.MUL || n.Op == parser.DIV
		cmp := n.Op == parser.LSS || n.Op == parser.GTR || n.Op == parser.LTE || n.Op == parser.GTE || n.Op == parser.EQLC || n.Op == parser.NEQ
		node := &nqNode{op: n.Op, lhs: lhs, rhs: rhs}
		switch {
		case lhs.kind == nqNumber && rhs.kind == nqNumber:
			return nil, false
		case lhs.kind == nqNumber || rhs.kind == nqNumber:
			if !arith {
				return nil, false
			}
			node.kind = nqScalarRight
			if lhs.kind == nqNumber {
				node.kind = nqScalarLeft
			}
			return node, true
		}
		m := n.VectorMatching
		if m == nil || m.On || len(m.MatchingLabels) > 0 || len(m.Include) > 0 || m.FillValues.LHS != nil || m.FillValues.RHS != nil {
			return nil, false
		}
		switch {
		case n.Op == parser.LOR && m.Card == parser.CardManyToMany:
			node.kind = nqOr
		case (arith || cmp) && m.Card == parser.CardOneToOne:
			node.kind = nqBinary
		default:
			return nil, false
		}
		return node, true
	case *parser.Call:
		switch n.Func.Name {
		case "label_replace":
			return compileLabelReplace(n, ids, step)
		case "min_over_time":
			return compileMinOverTime(n, ids, step)
		case "histogram_quantile":
			return compileAgg(n, ids)
		}
	}
	return nil, false
}

// compileSelect compiles a selector of a recording at an offset that is a
// whole number of steps.
func compileSelect(n *parser.VectorSelector, ids map[string]int, step time.Duration) (*nqNode, bool) {
	if len(n.LabelMatchers) != 1 || n.OriginalOffsetExpr != nil || n.Timestamp != nil || n.StartOrEnd != 0 || n.Anchored || n.Smoothed {
		return nil, false
	}
	m := n.LabelMatchers[0]
	i, ok := ids[m.Value]
	if m.Name != recordingLabel || m.Type != labels.MatchEqual || !ok || n.OriginalOffset < 0 || n.OriginalOffset%step != 0 {
		return nil, false
	}
	return &nqNode{kind: nqSelect, rec: i, offset: n.OriginalOffset.Milliseconds()}, true
}

// compileLabelReplace compiles label_replace(v, dst, repl, "", "") where
// repl is a constant: it sets dst to repl on every series.
func compileLabelReplace(n *parser.Call, ids map[string]int, step time.Duration) (*nqNode, bool) {
	if len(n.Args) != 5 {
		return nil, false
	}
	var s [4]string
	for i := range s {
		lit, ok := n.Args[i+1].(*parser.StringLiteral)
		if !ok {
			return nil, false
		}
		s[i] = lit.Val
	}
	dst, repl, src, regex := s[0], s[1], s[2], s[3]
	if src != "" || regex != "" || repl == "" || strings.Contains(repl, "$") || !labelName.MatchString(dst) || strings.HasPrefix(dst, "__") {
		return nil, false
	}
	in, ok := compileNQ(n.Args[0], ids, step)
	if !ok || in.kind == nqNumber {
		return nil, false
	}
	return &nqNode{kind: nqLabelReplace, lhs: in, dst: dst, val: repl}, true
}

// compileAgg compiles a nativeAgg: sum by (...) or histogram_quantile of
// a recording.
func compileAgg(e parser.Expr, ids map[string]int) (*nqNode, bool) {
	a, ok := nativeAggOf(e)
	if !ok {
		return nil, false
	}
	i, ok := ids[a.src]
	if !ok {
		return nil, false
	}
	return &nqNode{kind: nqAgg, rec: i, agg: a}, true
}

// compileMinOverTime compiles min_over_time of a subquery of a recording
// stepping at step, without offset.
func compileMinOverTime(n *parser.Call, ids map[string]int, step time.Duration) (*nqNode, bool) {
	if len(n.Args) != 1 {
		return nil, false
	}
	sq, ok := n.Args[0].(*parser.SubqueryExpr)
	if !ok || sq.Step != step || sq.OriginalOffset != 0 || sq.OriginalOffsetExpr != nil || sq.Timestamp != nil || sq.StartOrEnd != 0 || sq.RangeExpr != nil || sq.StepExpr != nil || sq.Range <= 0 {
		return nil, false
	}
	in, ok := compileNQ(sq.Expr, ids, step)
	if !ok || in.kind != nqSelect {
		return nil, false
	}
	return &nqNode{kind: nqMinOverTime, lhs: in, rng: sq.Range.Milliseconds()}, true
}

// evaluate returns the query over [from, end] at step, as the engine's
// range query would (series in label order, each with its points), from
// the recorded series; ok is false where the engine must evaluate it.
// from must be a multiple of step, as the Recorder's ranges are: a
// subquery's points are then the range's steps.
func (q *nativeQuery) evaluate(recorded [][]*recSeries, from, end, step int64) (promql.Matrix, bool) {
	if from%step != 0 {
		return nil, false
	}
	steps := int((end-from)/step) + 1
	out, ok := q.root.eval(recorded, from, step, steps)
	if !ok {
		return nil, false
	}
	slices.SortFunc(out, func(x, y nqSeries) int { return labels.Compare(x.labels, y.labels) })
	var m promql.Matrix
	for i, s := range out {
		if i > 0 && labels.Equal(s.labels, out[i-1].labels) {
			return nil, false // the engine reports the same labels twice
		}
		n := 0
		for _, h := range s.has {
			if h {
				n++
			}
		}
		if n == 0 {
			continue
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

// eval returns the node's series over steps steps from from. A number's
// node is only ever an operand, read by its parent.
func (n *nqNode) eval(recorded [][]*recSeries, from, step int64, steps int) ([]nqSeries, bool) {
	switch n.kind {
	case nqSelect:
		return selectRecording(recorded[n.rec], from-n.offset, step, steps)
	case nqMinOverTime:
		return n.minOverTime(recorded, from, step, steps)
	case nqAgg:
		m, ok := n.agg.evaluate(recorded[n.rec], from, from+int64(steps-1)*step, step)
		if !ok {
			return nil, false
		}
		out := make([]nqSeries, len(m))
		for i, s := range m {
			out[i] = nqSeries{labels: s.Metric, vals: make([]float64, steps), has: make([]bool, steps)}
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
		ss, ok := vec.eval(recorded, from, step, steps)
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
		ss, ok := n.lhs.eval(recorded, from, step, steps)
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
		lhs, ok := n.lhs.eval(recorded, from, step, steps)
		if !ok {
			return nil, false
		}
		rhs, ok := n.rhs.eval(recorded, from, step, steps)
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
func selectRecording(in []*recSeries, from, step int64, steps int) ([]nqSeries, bool) {
	out := make([]nqSeries, len(in))
	vals := make([]float64, len(in)*steps)
	has := make([]bool, len(in)*steps)
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
func (n *nqNode) minOverTime(recorded [][]*recSeries, from, step int64, steps int) ([]nqSeries, bool) {
	// The subquery's points start at the first step after from-rng.
	back := int(n.rng / step)
	if n.rng%step == 0 {
		back--
	}
	in, ok := n.lhs.eval(recorded, from-int64(back)*step, step, steps+back)
	if !ok {
		return nil, false
	}
	out := make([]nqSeries, len(in))
	for i, s := range in {
		o := nqSeries{labels: s.labels, vals: make([]float64, steps), has: make([]bool, steps)}
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
func binary(op parser.ItemType, lhs, rhs []nqSeries) ([]nqSeries, bool) {
	if duplicateLabels(lhs) || duplicateLabels(rhs) {
		return nil, false
	}
	byLabels := make(map[string]int, len(rhs))
	for j, s := range rhs {
		byLabels[s.labels.String()] = j
	}
	var out []nqSeries
	for _, l := range lhs {
		j, ok := byLabels[l.labels.String()]
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
	for i, s := range lhs {
		byLabels[s.labels.String()] = i
	}
	out := lhs
	for _, r := range rhs {
		i, ok := byLabels[r.labels.String()]
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
	for _, s := range ss {
		k := s.labels.String()
		if seen[k] {
			return true
		}
		seen[k] = true
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
	panic("replay: arith of " + strconv.Quote(op.String()))
}
