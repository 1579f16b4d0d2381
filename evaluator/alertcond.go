package evaluator

import (
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hermes-failover/hermes/rules"
)

// targetEnv is one target's alert environment, built only as far as its
// rules need it. At 10,000 routes, building every route's signals map,
// causes and evidence for every rule and route cost most of the alert
// rules' time, though a route with no active alert uses them for nothing:
// here a route's signals, causes and evidence enter the environment (see
// routeDetails) only when a condition reads one of them other than
// signals.x, or an alert of the target moves; signals.x is read from the
// route's contributions (signal).
type targetEnv struct {
	env rules.AlertEnv
	// route is the route whose details env still lacks; nil once they are
	// in, and for service and actuator targets.
	route *RouteState
	// p and now are what routeDetails needs besides the route.
	p   *Policy
	now time.Time
	// err is the first run-time error of the condition being evaluated.
	err error
}

// full is the whole environment.
func (t *targetEnv) full() *rules.AlertEnv {
	if t.route != nil {
		routeDetails(t.p, &t.env, t.route, t.now)
		t.route = nil
	}
	return &t.env
}

// signal is what signals[name] gives: the map holds every contribution's
// value, the last one of a name winning, and a name without one reads 0.
func (t *targetEnv) signal(name string) float64 {
	if t.route == nil {
		return t.env.Signals[name]
	}
	cs := t.route.Score.Contributions
	for i := len(cs) - 1; i >= 0; i-- {
		if cs[i].Signal == name {
			return envSignal(&cs[i])
		}
	}
	return 0
}

// Condition is an alert rule's condition (rules.AlertRuleConfig.Cond, the
// tree the loader made of its text), compiled once per policy into Go
// closures: the one interpreter of the alert language in the live path.
// rules/config's TestCoreMatchesExprLang holds it to expr-lang's own.
type Condition struct {
	fn func(*targetEnv) bool
}

// CompileCondition compiles the condition cond of the rule whose text is
// src (for the position of a run-time error).
func CompileCondition(cond *rules.Expr, src string) (Condition, error) {
	if cond == nil {
		return Condition{}, errorString("its condition was not compiled: build the policy with rules/config (config.Config.Rules)")
	}
	c := condCompiler{src: src}
	fn := c.bool(cond)
	if c.err != nil {
		return Condition{}, c.err
	}
	return Condition{fn: fn}, nil
}

// Eval is what the condition gives on the whole environment env; an error
// (an integer modulo by zero) is spelled as expr-lang spells it.
func (c *Condition) Eval(env *rules.AlertEnv) (bool, error) {
	return c.eval(&targetEnv{env: *env})
}

// eval is what the condition gives for the target t.
func (c *Condition) eval(t *targetEnv) (bool, error) {
	t.err = nil
	v := c.fn(t)
	if t.err != nil {
		return false, t.err
	}
	return v, nil
}

// errorString is an error of a fixed text.
type errorString string

func (e errorString) Error() string { return string(e) }

// condCompiler compiles a condition's tree into closures, keeping the
// first error (a tree the loader would not make).
type condCompiler struct {
	src string
	err error
}

// fail records a tree the compiler does not know.
func (c *condCompiler) fail(n *rules.Expr) {
	if c.err == nil {
		c.err = errorString("unsupported node (op " + strconv.Itoa(int(n.Op)) + ", type " + strconv.Itoa(int(n.Type)) + ") at " +
			strconv.Itoa(n.Line) + ":" + strconv.Itoa(n.Column))
	}
}

// variable is the variable n reads, with whether it is of type t.
func (c *condCompiler) variable(n *rules.Expr, t rules.ExprType) (rules.AlertVar, bool) {
	v, ok := rules.LookupAlertVar(n.Name)
	if !ok || v.Type != t {
		c.fail(n)
		return v, false
	}
	return v, true
}

// args compiles n's operands with f.
func args[T any](n *rules.Expr, f func(*rules.Expr) func(*targetEnv) T) (l, r func(*targetEnv) T) {
	return f(n.Args[0]), f(n.Args[1])
}

// bool compiles a boolean node.
func (c *condCompiler) bool(n *rules.Expr) func(*targetEnv) bool {
	if n.Type != rules.TypeBool {
		c.fail(n)
		return func(*targetEnv) bool { return false }
	}
	switch n.Op {
	case rules.OpConst:
		v := n.Bool
		return func(*targetEnv) bool { return v }
	case rules.OpVar:
		if v, ok := c.variable(n, rules.TypeBool); ok {
			get := v.Bool
			return func(t *targetEnv) bool { return get(&t.env) }
		}
	case rules.OpNot:
		x := c.bool(n.Args[0])
		return func(t *targetEnv) bool { return !x(t) }
	case rules.OpAnd:
		l, r := args(n, c.bool)
		return func(t *targetEnv) bool { return l(t) && r(t) }
	case rules.OpOr:
		l, r := args(n, c.bool)
		return func(t *targetEnv) bool { return l(t) || r(t) }
	case rules.OpEq, rules.OpNe, rules.OpLt, rules.OpLe, rules.OpGt, rules.OpGe:
		return c.comparison(n)
	case rules.OpIn:
		return c.in(n)
	case rules.OpContains, rules.OpStartsWith, rules.OpEndsWith:
		l, r := args(n, c.string)
		f := strings.Contains
		switch n.Op {
		case rules.OpStartsWith:
			f = strings.HasPrefix
		case rules.OpEndsWith:
			f = strings.HasSuffix
		}
		return func(t *targetEnv) bool { return f(l(t), r(t)) }
	case rules.OpCond:
		return cond(n, c.bool(n.Args[0]), c.bool)
	}
	c.fail(n)
	return func(*targetEnv) bool { return false }
}

// cond is cond ? a : b, the branches compiled with f.
func cond[T any](n *rules.Expr, test func(*targetEnv) bool, f func(*rules.Expr) func(*targetEnv) T) func(*targetEnv) T {
	a, b := f(n.Args[1]), f(n.Args[2])
	return func(t *targetEnv) T {
		if test(t) {
			return a(t)
		}
		return b(t)
	}
}

// comparison compiles ==, !=, <, <=, > and >=: of two ints as ints, of
// numbers otherwise as float64 (as expr-lang compares them), of strings
// and of booleans.
func (c *condCompiler) comparison(n *rules.Expr) func(*targetEnv) bool {
	lt, rt := n.Args[0].Type, n.Args[1].Type
	switch {
	case lt == rules.TypeInt && rt == rules.TypeInt:
		l, r := args(n, c.int)
		return compare(n.Op, l, r)
	case lt.Numeric() && rt.Numeric():
		l, r := args(n, c.float)
		return compare(n.Op, l, r)
	case lt == rules.TypeString && rt == rules.TypeString:
		l, r := args(n, c.string)
		return compare(n.Op, l, r)
	case lt == rules.TypeBool && rt == rules.TypeBool && (n.Op == rules.OpEq || n.Op == rules.OpNe):
		l, r := args(n, c.bool)
		ne := n.Op == rules.OpNe
		return func(t *targetEnv) bool { return (l(t) == r(t)) != ne }
	}
	c.fail(n)
	return func(*targetEnv) bool { return false }
}

// compare is the comparison op of l and r.
func compare[T int | float64 | string](op rules.ExprOp, l, r func(*targetEnv) T) func(*targetEnv) bool {
	switch op {
	case rules.OpEq:
		return func(t *targetEnv) bool { return l(t) == r(t) }
	case rules.OpNe:
		return func(t *targetEnv) bool { return l(t) != r(t) }
	case rules.OpLt:
		return func(t *targetEnv) bool { return l(t) < r(t) }
	case rules.OpLe:
		return func(t *targetEnv) bool { return l(t) <= r(t) }
	case rules.OpGt:
		return func(t *targetEnv) bool { return l(t) > r(t) }
	default: // OpGe
		return func(t *targetEnv) bool { return l(t) >= r(t) }
	}
}

// in compiles a string in a list, or a key in a map.
func (c *condCompiler) in(n *rules.Expr) func(*targetEnv) bool {
	x := c.string(n.Args[0])
	switch n.Args[1].Type {
	case rules.TypeStrings:
		list := c.strings(n.Args[1])
		return func(t *targetEnv) bool {
			s := x(t)
			for _, v := range list(t) {
				if v == s {
					return true
				}
			}
			return false
		}
	case rules.TypeFloatMap:
		m := c.floatMap(n.Args[1])
		return func(t *targetEnv) bool { _, ok := m(t)[x(t)]; return ok }
	case rules.TypeIntMap:
		m := c.intMap(n.Args[1])
		return func(t *targetEnv) bool { _, ok := m(t)[x(t)]; return ok }
	}
	c.fail(n)
	return func(*targetEnv) bool { return false }
}

// int compiles an integer node.
func (c *condCompiler) int(n *rules.Expr) func(*targetEnv) int {
	if n.Type != rules.TypeInt {
		c.fail(n)
		return func(*targetEnv) int { return 0 }
	}
	switch n.Op {
	case rules.OpConst:
		v := n.Int
		return func(*targetEnv) int { return v }
	case rules.OpVar:
		if v, ok := c.variable(n, rules.TypeInt); ok {
			get := v.Int
			return func(t *targetEnv) int { return get(&t.env) }
		}
	case rules.OpIndex:
		m, key := c.intMap(n.Args[0]), c.string(n.Args[1])
		return func(t *targetEnv) int { return m(t)[key(t)] }
	case rules.OpNeg:
		x := c.int(n.Args[0])
		return func(t *targetEnv) int { return -x(t) }
	case rules.OpAdd:
		l, r := args(n, c.int)
		return func(t *targetEnv) int { return l(t) + r(t) }
	case rules.OpSub:
		l, r := args(n, c.int)
		return func(t *targetEnv) int { return l(t) - r(t) }
	case rules.OpMul:
		l, r := args(n, c.int)
		return func(t *targetEnv) int { return l(t) * r(t) }
	case rules.OpMod:
		l, r := args(n, c.int)
		src, line, col := c.src, n.Line, n.Column
		return func(t *targetEnv) int {
			a, b := l(t), r(t)
			if b == 0 {
				if t.err == nil {
					t.err = runtimeError(src, line, col, "runtime error: integer divide by zero")
				}
				return 0
			}
			return a % b
		}
	case rules.OpLen:
		return c.length(n.Args[0])
	case rules.OpCond:
		return cond(n, c.bool(n.Args[0]), c.int)
	}
	c.fail(n)
	return func(*targetEnv) int { return 0 }
}

// length compiles len(x): of a list or map its length, of a string its
// runes (as expr-lang counts).
func (c *condCompiler) length(n *rules.Expr) func(*targetEnv) int {
	switch n.Type {
	case rules.TypeString:
		s := c.string(n)
		return func(t *targetEnv) int { return utf8.RuneCountInString(s(t)) }
	case rules.TypeStrings:
		l := c.strings(n)
		return func(t *targetEnv) int { return len(l(t)) }
	case rules.TypeFloatMap:
		m := c.floatMap(n)
		return func(t *targetEnv) int { return len(m(t)) }
	case rules.TypeIntMap:
		m := c.intMap(n)
		return func(t *targetEnv) int { return len(m(t)) }
	}
	c.fail(n)
	return func(*targetEnv) int { return 0 }
}

// float compiles a numeric node as a float64 (an int converted, as
// expr-lang converts an int it computes or compares with a float).
func (c *condCompiler) float(n *rules.Expr) func(*targetEnv) float64 {
	if n.Type == rules.TypeInt {
		if n.Op == rules.OpConst {
			v := float64(n.Int)
			return func(*targetEnv) float64 { return v }
		}
		i := c.int(n)
		return func(t *targetEnv) float64 { return float64(i(t)) }
	}
	if n.Type != rules.TypeFloat {
		c.fail(n)
		return func(*targetEnv) float64 { return 0 }
	}
	switch n.Op {
	case rules.OpConst:
		v := n.Float
		return func(*targetEnv) float64 { return v }
	case rules.OpVar:
		if v, ok := c.variable(n, rules.TypeFloat); ok {
			get := v.Float
			return func(t *targetEnv) float64 { return get(&t.env) }
		}
	case rules.OpIndex:
		if m := n.Args[0]; m.Op == rules.OpVar && m.Name == rules.AlertSignals && n.Args[1].Op == rules.OpConst {
			name := n.Args[1].Str
			return func(t *targetEnv) float64 { return t.signal(name) }
		}
		m, key := c.floatMap(n.Args[0]), c.string(n.Args[1])
		return func(t *targetEnv) float64 { return m(t)[key(t)] }
	case rules.OpNeg:
		x := c.float(n.Args[0])
		return func(t *targetEnv) float64 { return -x(t) }
	case rules.OpAdd:
		l, r := args(n, c.float)
		return func(t *targetEnv) float64 { return l(t) + r(t) }
	case rules.OpSub:
		l, r := args(n, c.float)
		return func(t *targetEnv) float64 { return l(t) - r(t) }
	case rules.OpMul:
		l, r := args(n, c.float)
		return func(t *targetEnv) float64 { return l(t) * r(t) }
	case rules.OpDiv:
		l, r := args(n, c.float)
		return func(t *targetEnv) float64 { return l(t) / r(t) }
	case rules.OpPow:
		l, r := args(n, c.float)
		return func(t *targetEnv) float64 { return math.Pow(l(t), r(t)) }
	case rules.OpCond:
		return cond(n, c.bool(n.Args[0]), c.float)
	}
	c.fail(n)
	return func(*targetEnv) float64 { return 0 }
}

// string compiles a string node.
func (c *condCompiler) string(n *rules.Expr) func(*targetEnv) string {
	if n.Type != rules.TypeString {
		c.fail(n)
		return func(*targetEnv) string { return "" }
	}
	switch n.Op {
	case rules.OpConst:
		v := n.Str
		return func(*targetEnv) string { return v }
	case rules.OpVar:
		if v, ok := c.variable(n, rules.TypeString); ok {
			get := v.String
			return func(t *targetEnv) string { return get(&t.env) }
		}
	case rules.OpAdd:
		l, r := args(n, c.string)
		return func(t *targetEnv) string { return l(t) + r(t) }
	case rules.OpCond:
		return cond(n, c.bool(n.Args[0]), c.string)
	}
	c.fail(n)
	return func(*targetEnv) string { return "" }
}

// strings compiles a list of strings.
func (c *condCompiler) strings(n *rules.Expr) func(*targetEnv) []string {
	if n.Type != rules.TypeStrings {
		c.fail(n)
		return func(*targetEnv) []string { return nil }
	}
	switch n.Op {
	case rules.OpVar:
		if v, ok := c.variable(n, rules.TypeStrings); ok {
			get := v.Strings
			if v.Detail {
				return func(t *targetEnv) []string { return get(t.full()) }
			}
			return func(t *targetEnv) []string { return get(&t.env) }
		}
	case rules.OpList:
		items := make([]func(*targetEnv) string, len(n.Args))
		for i, a := range n.Args {
			items[i] = c.string(a)
		}
		return func(t *targetEnv) []string {
			l := make([]string, len(items))
			for i, f := range items {
				l[i] = f(t)
			}
			return l
		}
	case rules.OpCond:
		return cond(n, c.bool(n.Args[0]), c.strings)
	}
	c.fail(n)
	return func(*targetEnv) []string { return nil }
}

// floatMap compiles a map of floats (signals).
func (c *condCompiler) floatMap(n *rules.Expr) func(*targetEnv) map[string]float64 {
	switch {
	case n.Op == rules.OpVar:
		if v, ok := c.variable(n, rules.TypeFloatMap); ok {
			get := v.FloatMap
			if v.Detail {
				return func(t *targetEnv) map[string]float64 { return get(t.full()) }
			}
			return func(t *targetEnv) map[string]float64 { return get(&t.env) }
		}
	case n.Op == rules.OpCond && n.Type == rules.TypeFloatMap:
		return cond(n, c.bool(n.Args[0]), c.floatMap)
	}
	c.fail(n)
	return func(*targetEnv) map[string]float64 { return nil }
}

// intMap compiles a map of ints (weights).
func (c *condCompiler) intMap(n *rules.Expr) func(*targetEnv) map[string]int {
	switch {
	case n.Op == rules.OpVar:
		if v, ok := c.variable(n, rules.TypeIntMap); ok {
			get := v.IntMap
			if v.Detail {
				return func(t *targetEnv) map[string]int { return get(t.full()) }
			}
			return func(t *targetEnv) map[string]int { return get(&t.env) }
		}
	case n.Op == rules.OpCond && n.Type == rules.TypeIntMap:
		return cond(n, c.bool(n.Args[0]), c.intMap)
	}
	c.fail(n)
	return func(*targetEnv) map[string]int { return nil }
}

// runtimeError is a run-time error of the condition src at line:col,
// spelled as expr-lang spells it (file.Error): the message, the position,
// and the line with a caret under the column.
func runtimeError(src string, line, col int, msg string) error {
	text := msg + " (" + strconv.Itoa(line) + ":" + strconv.Itoa(col+1) + ")"
	lines := strings.Split(src, "\n")
	if line < 1 || line > len(lines) || lines[line-1] == "" {
		return errorString(text)
	}
	return errorString(text + "\n | " + strings.ReplaceAll(lines[line-1], "\t", " ") + "\n | " + strings.Repeat(".", col) + "^")
}
