package backtest

import (
	"cmp"
	"slices"
	"strconv"
	"time"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// recordingLabel marks a selector that reads a recording instead of the
// loaded series. Labels starting with __ are reserved for internal use, so
// no series file can hold it.
const recordingLabel = "__hermes_recording__"

// recordingPlan is what a backtest records, as Prometheus recording rules
// do: every sub-expression that several queries share (an hour-long latency
// baseline read now and 30m ago, the request rate of four ratios) is
// evaluated once per step into a series, and the queries read that series.
type recordingPlan struct {
	// recs are in evaluation order: a recording reads only earlier ones.
	recs []*recording
	// rewrite maps a query to its text reading the recordings; queries
	// that read none are absent.
	rewrite map[string]string
}

// recording is one shared sub-expression.
type recording struct {
	id string
	// expr is the sub-expression with its offsets removed, reading earlier
	// recordings where it shares their sub-expressions.
	expr string
	// back is how far before an evaluation time the queries read it: their
	// offsets and the ranges of the subqueries around it.
	back time.Duration
	// level is 0 for a recording that reads no other, else one more than
	// the highest level it reads: recordings of a level are independent.
	level int
}

// timeFuncs are the functions whose value depends on the evaluation time
// itself, so an expression holding one is not the same expression shifted.
var timeFuncs = map[string]bool{
	"time": true, "timestamp": true, "minute": true, "hour": true, "day_of_week": true,
	"day_of_month": true, "day_of_year": true, "days_in_month": true, "month": true, "year": true,
}

// planRecordings finds the sub-expressions that queries, evaluated at
// multiples of step since the Unix epoch, share, and rewrites the queries
// to read them. subqueryStep is the step of a subquery that gives none.
//
// A shared sub-expression e is recorded only where the rewrite is exact:
//   - every selector in e has the same offset o, a multiple of step, and o
//     is a multiple of every subquery step in e: then e at t is e without
//     its offsets at t-o, the recording read with `offset o`;
//   - e reads a range (a matrix selector or a subquery), so recording it
//     saves work; it holds no function of the evaluation time itself and no
//     @ modifier;
//   - every subquery around e steps in multiples of step, so e is read only
//     at times the recording holds;
//   - no aggregation is around e: an aggregation adds its inputs in the
//     order they come, and a recording comes in label order, which could
//     change the last bit of a sum.
//
// A query that does not parse, or holds an @ modifier or a duration
// expression, is left as written.
func planRecordings(queries []string, step, subqueryStep time.Duration) *recordingPlan {
	pl := &planner{p: parser.NewParser(parser.Options{}), step: step, subqueryStep: subqueryStep}
	var roots []string
	for _, q := range queries {
		if e, err := pl.p.ParseExpr(q); err == nil && rewritable(e) && !slices.Contains(roots, q) {
			roots = append(roots, q)
		}
	}
	// Count every candidate, nested ones included, then drop those that
	// the rewrite leaves read fewer than twice, until none drops.
	counts := map[string]int{}
	for _, q := range roots {
		pl.rewrite(q, "", nil, func(key string) { counts[key]++ })
	}
	shared := map[string]bool{}
	for k, n := range counts {
		if n >= 2 {
			shared[k] = true
		}
	}
	for {
		uses := map[string]int{}
		count := func(key string) { uses[key]++ }
		for _, q := range roots {
			pl.rewrite(q, "", shared, count)
		}
		for k := range shared {
			pl.rewrite(k, k, shared, count)
		}
		dropped := false
		for k := range shared {
			if uses[k] < 2 {
				delete(shared, k)
				dropped = true
			}
		}
		if !dropped {
			break
		}
	}
	// A sub-expression prints shorter than any expression holding it.
	keys := make([]string, 0, len(shared))
	for k := range shared {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), cmp.Compare(a, b)) })
	plan := &recordingPlan{rewrite: map[string]string{}}
	pl.ids = map[string]string{}
	byKey := map[string]*recording{}
	for i, k := range keys {
		r := &recording{id: strconv.Itoa(i)}
		pl.ids[k] = r.id
		byKey[k] = r
		plan.recs = append(plan.recs, r)
	}
	for _, k := range keys {
		r := byKey[k]
		r.expr = pl.rewrite(k, k, shared, func(dep string) { r.level = max(r.level, byKey[dep].level+1) })
	}
	for _, q := range roots {
		if rw := pl.rewrite(q, "", shared, nil); rw != q {
			plan.rewrite[q] = rw
		}
	}
	// How far back each recording is read: a recording read by a later
	// one inherits that one's reach.
	for i := len(keys) - 1; i >= 0; i-- {
		for _, src := range append(slices.Clone(roots), keys[i+1:]...) {
			base := time.Duration(0)
			if r, ok := byKey[src]; ok {
				base = r.back
			}
			self := ""
			if _, ok := byKey[src]; ok {
				self = src
			}
			pl.reach(src, self, keys[i], shared, func(back time.Duration) {
				byKey[keys[i]].back = max(byKey[keys[i]].back, base+back)
			})
		}
	}
	return plan
}

// planner holds what planRecordings needs while it walks expressions.
type planner struct {
	p                  parser.Parser
	step, subqueryStep time.Duration
	// ids names the recordings once they are chosen.
	ids map[string]string
}

// rewrite walks the expression q top-down; at every candidate that is in
// shared (any candidate when shared is nil) other than self, it calls use
// with its key and, if shared is set, replaces it by a selector of its
// recording without walking into it. It returns the rewritten text.
func (pl *planner) rewrite(q, self string, shared map[string]bool, use func(key string)) string {
	e, err := pl.p.ParseExpr(q)
	if err != nil {
		return q
	}
	e = pl.walk(e, nil, func(n parser.Expr, path []parser.Node) parser.Expr {
		key, off, ok := pl.candidate(n, path)
		if !ok || key == self || (shared != nil && !shared[key]) {
			return nil
		}
		if use != nil {
			use(key)
		}
		switch {
		case shared == nil:
			return nil // count what it holds too
		case pl.ids == nil:
			return n // counted; do not walk into it
		}
		return &parser.VectorSelector{
			LabelMatchers:  []*labels.Matcher{labels.MustNewMatcher(labels.MatchEqual, recordingLabel, pl.ids[key])},
			OriginalOffset: off,
		}
	})
	return e.String()
}

// reach calls found with how far before the evaluation time src (a query,
// or the recording self) reads the recording key: the offset it reads it
// with plus the ranges and offsets of the subqueries around it, and one
// subquery step for their alignment.
func (pl *planner) reach(src, self, key string, shared map[string]bool, found func(time.Duration)) {
	e, err := pl.p.ParseExpr(src)
	if err != nil {
		return
	}
	pl.walk(e, nil, func(n parser.Expr, path []parser.Node) parser.Expr {
		k, off, ok := pl.candidate(n, path)
		if !ok || k == self || !shared[k] {
			return nil
		}
		if k == key {
			back := off
			for _, a := range path {
				if sq, ok := a.(*parser.SubqueryExpr); ok {
					back += sq.OriginalOffset + sq.Range + pl.subStep(sq)
				}
			}
			found(back)
		}
		return n
	})
}

// walk visits e top-down with the path of its ancestors; where f returns
// an expression, that replaces the node and walk does not descend into it.
func (pl *planner) walk(e parser.Expr, path []parser.Node, f func(parser.Expr, []parser.Node) parser.Expr) parser.Expr {
	if r := f(e, path); r != nil {
		return r
	}
	path = append(path, e)
	switch n := e.(type) {
	case *parser.AggregateExpr:
		n.Expr = pl.walk(n.Expr, path, f)
	case *parser.BinaryExpr:
		n.LHS = pl.walk(n.LHS, path, f)
		n.RHS = pl.walk(n.RHS, path, f)
	case *parser.Call:
		for i, a := range n.Args {
			n.Args[i] = pl.walk(a, path, f)
		}
	case *parser.SubqueryExpr:
		n.Expr = pl.walk(n.Expr, path, f)
	case *parser.ParenExpr:
		n.Expr = pl.walk(n.Expr, path, f)
	case *parser.UnaryExpr:
		n.Expr = pl.walk(n.Expr, path, f)
	}
	return e
}

// candidate says whether n, with ancestors path, may be recorded, and
// returns its key (its text without offsets) and its offset.
func (pl *planner) candidate(n parser.Expr, path []parser.Node) (key string, off time.Duration, ok bool) {
	switch n.(type) {
	case *parser.VectorSelector, *parser.ParenExpr, *parser.NumberLiteral, *parser.StringLiteral:
		return "", 0, false
	}
	if n.Type() != parser.ValueTypeVector {
		return "", 0, false
	}
	for _, a := range path {
		switch a := a.(type) {
		case *parser.AggregateExpr:
			return "", 0, false
		case *parser.SubqueryExpr:
			if pl.subStep(a)%pl.step != 0 {
				return "", 0, false
			}
		}
	}
	offsets := map[time.Duration]bool{}
	var subSteps []time.Duration
	ranged, timed := false, false
	parser.Inspect(n, func(m parser.Node, _ []parser.Node) error {
		switch m := m.(type) {
		case *parser.VectorSelector:
			offsets[m.OriginalOffset] = true
		case *parser.MatrixSelector:
			ranged = true
		case *parser.SubqueryExpr:
			ranged = true
			subSteps = append(subSteps, pl.subStep(m))
			if m.OriginalOffset != 0 {
				timed = true
			}
		case *parser.Call:
			timed = timed || timeFuncs[m.Func.Name]
		}
		return nil
	})
	if !ranged || timed || len(offsets) != 1 {
		return "", 0, false
	}
	for o := range offsets {
		off = o
	}
	if off < 0 || off%pl.step != 0 {
		return "", 0, false
	}
	for _, s := range subSteps {
		if s <= 0 || off%s != 0 {
			return "", 0, false
		}
	}
	if off == 0 {
		return n.String(), 0, true
	}
	c, err := pl.p.ParseExpr(n.String())
	if err != nil {
		return "", 0, false
	}
	parser.Inspect(c, func(m parser.Node, _ []parser.Node) error {
		if vs, ok := m.(*parser.VectorSelector); ok {
			vs.OriginalOffset = 0
		}
		return nil
	})
	return c.String(), off, true
}

// subStep is the step a subquery evaluates at.
func (pl *planner) subStep(sq *parser.SubqueryExpr) time.Duration {
	if sq.Step > 0 {
		return sq.Step
	}
	return pl.subqueryStep
}

// rewritable says whether a query may read recordings: it holds no @
// modifier and no duration expression, whose times a shift would change.
func rewritable(e parser.Expr) bool {
	ok := true
	parser.Inspect(e, func(m parser.Node, _ []parser.Node) error {
		switch m := m.(type) {
		case *parser.VectorSelector:
			ok = ok && m.Timestamp == nil && m.StartOrEnd == 0 && m.OriginalOffsetExpr == nil && !m.Anchored && !m.Smoothed
		case *parser.MatrixSelector:
			ok = ok && m.RangeExpr == nil
		case *parser.SubqueryExpr:
			ok = ok && m.Timestamp == nil && m.StartOrEnd == 0 && m.OriginalOffsetExpr == nil && m.RangeExpr == nil && m.StepExpr == nil
		}
		return nil
	})
	return ok
}
