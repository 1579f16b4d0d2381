package backtest

import (
	"regexp"
	"strings"
	"time"

	"github.com/prometheus/prometheus/model/labels"
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
