package evaluator

import (
	"time"

	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/vm"

	"github.com/hermes-failover/hermes/rules"
)

// targetEnv is one target's alert environment, built only as far as its
// rules need it. At 10,000 routes, building every route's signals map,
// causes and evidence and running an expr program per rule and route cost
// most of the alert rules' time, though a route with no active alert uses
// them for nothing: here a route's signals, causes and evidence enter the
// environment (see routeDetails) only when a rule runs its expr program or
// an alert of the target moves; and a condition made only of the shapes
// nativeCond knows is decided in Go, reading signals from the route's
// contributions. What either gives is what the expr program gives on the
// whole environment (TestTargetEnvMatchesExpr).
type targetEnv struct {
	env rules.AlertEnv
	// route is the route whose details env still lacks; nil once they are
	// in, and for service and actuator targets.
	route *RouteState
	// p and now are what routeDetails needs besides the route.
	p   *Policy
	now time.Time
}

// full is the whole environment.
func (t *targetEnv) full() *rules.AlertEnv {
	if t.route != nil {
		routeDetails(t.p, &t.env, t.route, t.now)
		t.route = nil
	}
	return &t.env
}

// alertCond is an alert rule's condition, compiled once per policy: its
// expr program, the reference evaluation, and, when nativeCond knows its
// shape, the same condition in Go. eval is the one way the core evaluates
// a condition; TestTargetEnvMatchesExpr and
// TestGeneratedConditionsMatchExpr hold it to the program.
type alertCond struct {
	prog   *vm.Program
	native func(*targetEnv) bool // nil when nativeCond does not know the shape
}

// compileCond compiles the condition src (rules.CompileAlertExpr).
func compileCond(src string) (alertCond, error) {
	prog, err := rules.CompileAlertExpr(src)
	if err != nil {
		return alertCond{}, err
	}
	return alertCond{prog: prog, native: nativeCond(prog.Node())}, nil
}

// eval is what the condition gives for the target t, as the expr program
// run by m gives it.
func (c *alertCond) eval(t *targetEnv, m *vm.VM) (any, error) {
	if c.native != nil {
		return c.native(t), nil
	}
	return m.Run(c.prog, t.full())
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

// nativeCond is the condition n (a compiled program's tree) as a Go
// function, reading the variables by the names rules/alertenv.go gives
// them (rules.AlertFloat, AlertInt, AlertString, AlertBool, AlertListVar,
// AlertSignals), nil unless n is made only of: the boolean fields degraded and
// drill, true and false; !, not, &&, and, ||, or; comparisons of numbers
// (score, stage, failing_for, signals.x or signals["x"], len of missing,
// evidence or causes, a literal), as expr compares them (two ints as ints,
// otherwise as float64); == and != of strings (route, service, level,
// actuator, error, a literal). None of these can fail at run time.
func nativeCond(n ast.Node) func(*targetEnv) bool {
	switch n := n.(type) {
	case *ast.BoolNode:
		v := n.Value
		return func(*targetEnv) bool { return v }
	case *ast.IdentifierNode:
		if get, ok := rules.AlertBool(n.Value); ok {
			return func(t *targetEnv) bool { return get(&t.env) }
		}
	case *ast.UnaryNode:
		if x := nativeCond(n.Node); x != nil && (n.Operator == "!" || n.Operator == "not") {
			return func(t *targetEnv) bool { return !x(t) }
		}
	case *ast.BinaryNode:
		return nativeBinary(n)
	}
	return nil
}

// nativeBinary is nativeCond of a binary node.
func nativeBinary(n *ast.BinaryNode) func(*targetEnv) bool {
	switch n.Operator {
	case "&&", "and", "||", "or":
		l, r := nativeCond(n.Left), nativeCond(n.Right)
		if l == nil || r == nil {
			return nil
		}
		if n.Operator == "&&" || n.Operator == "and" {
			return func(t *targetEnv) bool { return l(t) && r(t) }
		}
		return func(t *targetEnv) bool { return l(t) || r(t) }
	case "==", "!=":
		if l, r := nativeString(n.Left), nativeString(n.Right); l != nil && r != nil {
			if n.Operator == "==" {
				return func(t *targetEnv) bool { return l(t) == r(t) }
			}
			return func(t *targetEnv) bool { return l(t) != r(t) }
		}
	case "<", "<=", ">", ">=":
	default:
		return nil
	}
	li, lf := nativeNumber(n.Left)
	ri, rf := nativeNumber(n.Right)
	switch {
	case li != nil && ri != nil:
		return compare(n.Operator, li, ri)
	case (li != nil || lf != nil) && (ri != nil || rf != nil):
		return compare(n.Operator, asFloat(li, lf), asFloat(ri, rf))
	}
	return nil
}

// asFloat is a numeric operand as a float64, as expr converts an int it
// compares with a float.
func asFloat(i func(*targetEnv) int, f func(*targetEnv) float64) func(*targetEnv) float64 {
	if f != nil {
		return f
	}
	return func(t *targetEnv) float64 { return float64(i(t)) }
}

// nativeNumber is n as a numeric operand: an int (i) or a float64 (f),
// neither when n is not one nativeCond knows.
func nativeNumber(n ast.Node) (i func(*targetEnv) int, f func(*targetEnv) float64) {
	switch n := n.(type) {
	case *ast.IntegerNode:
		v := n.Value
		return func(*targetEnv) int { return v }, nil
	case *ast.FloatNode:
		v := n.Value
		return nil, func(*targetEnv) float64 { return v }
	case *ast.IdentifierNode:
		if get, ok := rules.AlertFloat(n.Value); ok {
			return nil, func(t *targetEnv) float64 { return get(&t.env) }
		}
		if get, ok := rules.AlertInt(n.Value); ok {
			return func(t *targetEnv) int { return get(&t.env) }, nil
		}
	case *ast.MemberNode:
		id, ok := n.Node.(*ast.IdentifierNode)
		key, isKey := n.Property.(*ast.StringNode)
		if ok && isKey && id.Value == rules.AlertSignals && !n.Optional && !n.Method {
			name := key.Value
			return nil, func(t *targetEnv) float64 { return t.signal(name) }
		}
	case *ast.BuiltinNode:
		if n.Name != "len" || len(n.Arguments) != 1 {
			break
		}
		if id, ok := n.Arguments[0].(*ast.IdentifierNode); ok {
			l, ok := rules.AlertListVar(id.Value)
			switch {
			case ok && l.Detail:
				return func(t *targetEnv) int { return len(l.Get(t.full())) }, nil
			case ok:
				return func(t *targetEnv) int { return len(l.Get(&t.env)) }, nil
			}
		}
	}
	return nil, nil
}

// nativeString is a string operand, nil when n is not one nativeCond
// knows.
func nativeString(n ast.Node) func(*targetEnv) string {
	switch n := n.(type) {
	case *ast.StringNode:
		v := n.Value
		return func(*targetEnv) string { return v }
	case *ast.IdentifierNode:
		if get, ok := rules.AlertString(n.Value); ok {
			return func(t *targetEnv) string { return get(&t.env) }
		}
	}
	return nil
}

// compare is the comparison op of l and r.
func compare[T int | float64](op string, l, r func(*targetEnv) T) func(*targetEnv) bool {
	switch op {
	case "==":
		return func(t *targetEnv) bool { return l(t) == r(t) }
	case "!=":
		return func(t *targetEnv) bool { return l(t) != r(t) }
	case "<":
		return func(t *targetEnv) bool { return l(t) < r(t) }
	case "<=":
		return func(t *targetEnv) bool { return l(t) <= r(t) }
	case ">":
		return func(t *targetEnv) bool { return l(t) > r(t) }
	default: // ">="
		return func(t *targetEnv) bool { return l(t) >= r(t) }
	}
}
