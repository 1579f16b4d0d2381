package config

import (
	"errors"
	"reflect"
	"strconv"
	"strings"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"

	"github.com/hermes-failover/hermes/rules"
)

// AlertExprEnv is e as expr-lang sees it: each variable of
// rules.AlertVars by its name. With its zero value, the environment
// conditions are type-checked against.
func AlertExprEnv(e *rules.AlertEnv) map[string]any {
	env := make(map[string]any, len(rules.AlertVars()))
	for _, v := range rules.AlertVars() {
		env[v.Name] = v.Value(e)
	}
	return env
}

// zeroEnv holds a value of each variable's type, for the checker.
func zeroEnv() map[string]any {
	return AlertExprEnv(&rules.AlertEnv{Signals: map[string]float64{}, Weights: map[string]int{}})
}

// CompileAlertExpr parses and type-checks an alert condition with
// expr-lang against rules.AlertVars, and converts its tree into the
// model's (rules.Expr), which the core evaluates. It refuses what the tree
// does not hold (docs/configuration.md, "Alert conditions"). prog is
// expr-lang's own program of the same tree (unoptimised: the optimiser
// may drop an operand that would fail, the core evaluates each it
// reaches); run it on AlertExprEnv. Errors are one line, with the
// line:column in src.
func CompileAlertExpr(src string) (cond *rules.Expr, prog *vm.Program, err error) {
	if strings.TrimSpace(src) == "" {
		return nil, nil, errors.New("expression is empty")
	}
	env := zeroEnv()
	// As expr-lang compiles by default (its optimiser refuses constants
	// it cannot fold, such as 1 % 0), then unoptimised, so that the tree
	// converted is the one the text spells (the optimiser folds constants
	// and turns lists into maps).
	_, err = expr.Compile(src, expr.Env(env), expr.AsBool())
	if err == nil {
		prog, err = expr.Compile(src, expr.Env(env), expr.AsBool(), expr.Optimize(false))
	}
	if err != nil {
		var ferr *file.Error
		if errors.As(err, &ferr) {
			return nil, nil, errors.New(ferr.Message + " (" + strconv.Itoa(ferr.Line) + ":" + strconv.Itoa(ferr.Column) + ")")
		}
		return nil, nil, err
	}
	c := exprConverter{src: src}
	cond, err = c.node(prog.Node())
	if err != nil {
		return nil, nil, err
	}
	return cond, prog, nil
}

// exprConverter turns expr-lang's checked tree into a rules.Expr.
type exprConverter struct{ src string }

// binaryOps are expr-lang's binary operators the tree holds.
var binaryOps = map[string]rules.ExprOp{
	"&&": rules.OpAnd, "and": rules.OpAnd, "||": rules.OpOr, "or": rules.OpOr,
	"==": rules.OpEq, "!=": rules.OpNe, "<": rules.OpLt, "<=": rules.OpLe, ">": rules.OpGt, ">=": rules.OpGe,
	"+": rules.OpAdd, "-": rules.OpSub, "*": rules.OpMul, "/": rules.OpDiv, "%": rules.OpMod,
	"**": rules.OpPow, "^": rules.OpPow,
	"in": rules.OpIn, "contains": rules.OpContains, "startsWith": rules.OpStartsWith, "endsWith": rules.OpEndsWith,
}

// exprTypes are the Go types of the tree's values.
var exprTypes = map[reflect.Type]rules.ExprType{
	reflect.TypeFor[bool]():               rules.TypeBool,
	reflect.TypeFor[int]():                rules.TypeInt,
	reflect.TypeFor[float64]():            rules.TypeFloat,
	reflect.TypeFor[string]():             rules.TypeString,
	reflect.TypeFor[[]string]():           rules.TypeStrings,
	reflect.TypeFor[map[string]float64](): rules.TypeFloatMap,
	reflect.TypeFor[map[string]int]():     rules.TypeIntMap,
}

// errorf is an error about n, with its line:column in the condition.
func (c *exprConverter) errorf(n ast.Node, msg string) error {
	line, col := c.position(n)
	return errors.New(msg + " (" + strconv.Itoa(line) + ":" + strconv.Itoa(col) + ")")
}

// position is n's line (from 1) and column (in runes, from 0), as
// expr-lang's errors count them (file.Error.Bind).
func (c *exprConverter) position(n ast.Node) (line, col int) {
	from := n.Location().From
	line = 1
	for i, r := range []rune(c.src) {
		if i == from {
			break
		}
		if r == '\n' {
			line, col = line+1, 0
		} else {
			col++
		}
	}
	return line, col
}

// node converts n, refusing what the tree does not hold.
func (c *exprConverter) node(n ast.Node) (*rules.Expr, error) {
	line, col := c.position(n)
	e := &rules.Expr{Line: line, Column: col}
	switch n := n.(type) {
	case *ast.ArrayNode:
		e.Op, e.Type = rules.OpList, rules.TypeStrings
		for _, item := range n.Nodes {
			a, err := c.node(item)
			if err != nil {
				return nil, err
			}
			if a.Type != rules.TypeString {
				return nil, c.errorf(item, "a list in an alert condition holds strings only")
			}
			e.Args = append(e.Args, a)
		}
		return e, nil
	case *ast.ChainNode:
		return nil, c.errorf(n, "optional chaining (?.) is not supported in alert conditions")
	}
	t, ok := exprTypes[n.Type()]
	if !ok {
		return nil, c.errorf(n, "a value of type "+n.Type().String()+" is not supported in alert conditions")
	}
	e.Type = t
	var args []ast.Node
	switch n := n.(type) {
	case *ast.BoolNode:
		e.Op, e.Bool = rules.OpConst, n.Value
	case *ast.IntegerNode:
		e.Op, e.Int, e.Float = rules.OpConst, n.Value, float64(n.Value)
	case *ast.FloatNode:
		e.Op, e.Float = rules.OpConst, n.Value
	case *ast.StringNode:
		e.Op, e.Str = rules.OpConst, n.Value
	case *ast.IdentifierNode:
		if _, ok := rules.LookupAlertVar(n.Value); !ok {
			return nil, c.errorf(n, "unknown name "+n.Value)
		}
		e.Op, e.Name = rules.OpVar, n.Value
	case *ast.MemberNode:
		if n.Optional || n.Method {
			return nil, c.errorf(n, "only a map's value (signals.x, weights[\"x\"]) can be read in alert conditions")
		}
		e.Op, args = rules.OpIndex, []ast.Node{n.Node, n.Property}
	case *ast.UnaryNode:
		switch n.Operator {
		case "!", "not":
			e.Op = rules.OpNot
		case "-":
			e.Op = rules.OpNeg
		case "+":
			return c.node(n.Node)
		default:
			return nil, c.errorf(n, "the operator "+n.Operator+" is not supported in alert conditions")
		}
		args = []ast.Node{n.Node}
	case *ast.BinaryNode:
		op, ok := binaryOps[n.Operator]
		if !ok {
			return nil, c.errorf(n, "the operator "+n.Operator+" is not supported in alert conditions")
		}
		e.Op, args = op, []ast.Node{n.Left, n.Right}
	case *ast.BuiltinNode:
		if n.Name != "len" || len(n.Arguments) != 1 {
			return nil, c.errorf(n, "the function "+n.Name+" is not supported in alert conditions; len is")
		}
		e.Op, args = rules.OpLen, n.Arguments
	case *ast.ConditionalNode:
		e.Op, args = rules.OpCond, []ast.Node{n.Cond, n.Exp1, n.Exp2}
	default:
		return nil, c.errorf(n, "this expression is not supported in alert conditions")
	}
	for _, a := range args {
		x, err := c.node(a)
		if err != nil {
			return nil, err
		}
		e.Args = append(e.Args, x)
	}
	if err := c.check(n, e); err != nil {
		return nil, err
	}
	return e, nil
}

// check refuses what the checker lets through but the tree does not hold:
// the operand types of each operator beyond those the core evaluates.
func (c *exprConverter) check(n ast.Node, e *rules.Expr) error {
	ts := make([]rules.ExprType, len(e.Args))
	for i, a := range e.Args {
		ts[i] = a.Type
	}
	ok := true
	switch e.Op {
	case rules.OpIndex:
		ok = (ts[0] == rules.TypeFloatMap || ts[0] == rules.TypeIntMap) && ts[1] == rules.TypeString
	case rules.OpNot:
		ok = ts[0] == rules.TypeBool
	case rules.OpNeg:
		ok = ts[0].Numeric()
	case rules.OpAnd, rules.OpOr:
		ok = ts[0] == rules.TypeBool && ts[1] == rules.TypeBool
	case rules.OpEq, rules.OpNe:
		ok = ts[0].Numeric() && ts[1].Numeric() || ts[0] == ts[1] && (ts[0] == rules.TypeString || ts[0] == rules.TypeBool)
	case rules.OpLt, rules.OpLe, rules.OpGt, rules.OpGe:
		ok = ts[0].Numeric() && ts[1].Numeric() || ts[0] == rules.TypeString && ts[1] == rules.TypeString
	case rules.OpAdd:
		ok = ts[0].Numeric() && ts[1].Numeric() || ts[0] == rules.TypeString && ts[1] == rules.TypeString
	case rules.OpSub, rules.OpMul, rules.OpDiv, rules.OpPow:
		ok = ts[0].Numeric() && ts[1].Numeric()
	case rules.OpMod:
		ok = ts[0] == rules.TypeInt && ts[1] == rules.TypeInt
	case rules.OpIn:
		ok = ts[0] == rules.TypeString && (ts[1] == rules.TypeStrings || ts[1] == rules.TypeFloatMap || ts[1] == rules.TypeIntMap)
	case rules.OpContains, rules.OpStartsWith, rules.OpEndsWith:
		ok = ts[0] == rules.TypeString && ts[1] == rules.TypeString
	case rules.OpLen:
		ok = ts[0] == rules.TypeString || ts[0] == rules.TypeStrings || ts[0] == rules.TypeFloatMap || ts[0] == rules.TypeIntMap
	case rules.OpCond:
		ok = ts[0] == rules.TypeBool && ts[1] == e.Type && ts[2] == e.Type
	}
	if !ok {
		return c.errorf(n, "these operand types are not supported in alert conditions")
	}
	return nil
}
