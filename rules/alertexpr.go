package rules

// Expr is a node of an alert condition's tree: what the loader
// (rules/config) makes of the condition's text, parsed and type-checked by
// expr-lang, and what the core (evaluator) compiles once per policy and
// evaluates. It holds the part of expr-lang's language alert conditions
// use (docs/configuration.md, "Alert conditions"); the loader refuses the
// rest with the rule's file:line.
type Expr struct {
	Op ExprOp
	// Type is what the node yields, as expr-lang's checker typed it.
	Type ExprType
	// Args are the operands: one for OpNot, OpNeg and OpLen; two for the
	// binary operators and OpIndex (the map, then the key); three for
	// OpCond (condition, then, else); any number for OpList.
	Args []*Expr
	// Name is the variable OpVar reads (see AlertVars).
	Name string
	// The constant of OpConst, by Type.
	Bool  bool
	Int   int
	Float float64
	Str   string
	// Line and Column are where the node is in the condition's text
	// (1-based line, 0-based column in runes, as expr-lang reports them),
	// for the run-time error of an integer modulo by zero.
	Line, Column int
}

// ExprOp is the kind of an Expr node.
type ExprOp uint8

// The kinds of Expr nodes.
const (
	OpConst      ExprOp = iota // a literal
	OpVar                      // a variable of AlertEnv, by Name
	OpIndex                    // map[key]: signals.x, signals["x"], weights[route]
	OpList                     // [a, b, …] of strings
	OpNot                      // !, not
	OpNeg                      // unary -
	OpAnd                      // &&, and
	OpOr                       // ||, or
	OpEq                       // ==
	OpNe                       // !=
	OpLt                       // <
	OpLe                       // <=
	OpGt                       // >
	OpGe                       // >=
	OpAdd                      // + (numbers, or strings joined)
	OpSub                      // -
	OpMul                      // *
	OpDiv                      // / (always a float)
	OpMod                      // % (integers; a run-time error by zero)
	OpPow                      // ** and ^ (always a float)
	OpIn                       // a string in a list, or a key in a map
	OpContains                 // contains (strings)
	OpStartsWith               // startsWith
	OpEndsWith                 // endsWith
	OpLen                      // len() of a list, a map or a string (in runes)
	OpCond                     // cond ? a : b
)

// ExprType is the type of an Expr node's value.
type ExprType uint8

// The types of Expr values: those of AlertEnv's variables.
const (
	TypeBool     ExprType = iota + 1
	TypeInt               // Go's int, as expr-lang's integers
	TypeFloat             // float64
	TypeString            // string
	TypeStrings           // []string
	TypeFloatMap          // map[string]float64 (signals)
	TypeIntMap            // map[string]int (weights)
)

// Numeric reports whether t is TypeInt or TypeFloat.
func (t ExprType) Numeric() bool { return t == TypeInt || t == TypeFloat }

// SignalRefs returns the signal names the condition reads through a
// constant key (signals.x or signals["x"]), in order of appearance.
func (e *Expr) SignalRefs() []string {
	var refs []string
	var walk func(*Expr)
	walk = func(n *Expr) {
		if n.Op == OpIndex && n.Args[0].Op == OpVar && n.Args[0].Name == AlertSignals && n.Args[1].Op == OpConst {
			refs = append(refs, n.Args[1].Str)
		}
		for _, a := range n.Args {
			walk(a)
		}
	}
	walk(e)
	return refs
}

// AlertVar is a variable of the alert language: its name, its type, and
// how to read it from an AlertEnv (the one getter of its type is set).
// AlertVars is the one place the variables' names are spelled: the loader
// type-checks conditions against them, the core reads them by them.
type AlertVar struct {
	Name string
	Type ExprType
	// Detail marks the route's details (its signals, evidence, causes and
	// waiting), which the core puts in a route's AlertEnv only when
	// something reads them.
	Detail   bool
	Bool     func(*AlertEnv) bool
	Int      func(*AlertEnv) int
	Float    func(*AlertEnv) float64
	String   func(*AlertEnv) string
	Strings  func(*AlertEnv) []string
	FloatMap func(*AlertEnv) map[string]float64
	IntMap   func(*AlertEnv) map[string]int
}

// AlertSignals is the variable holding every signal's value, read as
// signals.x or signals["x"]. It is a route's detail (see AlertVar).
const AlertSignals = "signals"

// alertVars are the alert language's variables, in AlertEnv's order.
var alertVars = []AlertVar{
	{Name: "route", Type: TypeString, String: func(e *AlertEnv) string { return e.Route }},
	{Name: "service", Type: TypeString, String: func(e *AlertEnv) string { return e.Service }},
	{Name: "score", Type: TypeFloat, Float: func(e *AlertEnv) float64 { return e.Score }},
	{Name: "level", Type: TypeString, String: func(e *AlertEnv) string { return e.Level }},
	{Name: "stage", Type: TypeInt, Int: func(e *AlertEnv) int { return e.Stage }},
	{Name: AlertSignals, Type: TypeFloatMap, Detail: true, FloatMap: func(e *AlertEnv) map[string]float64 { return e.Signals }},
	{Name: "missing", Type: TypeStrings, Strings: func(e *AlertEnv) []string { return e.Missing }},
	{Name: "degraded", Type: TypeBool, Bool: func(e *AlertEnv) bool { return e.Degraded }},
	{Name: "weights", Type: TypeIntMap, IntMap: func(e *AlertEnv) map[string]int { return e.Weights }},
	{Name: "evidence", Type: TypeStrings, Detail: true, Strings: func(e *AlertEnv) []string { return e.Evidence }},
	{Name: "causes", Type: TypeStrings, Detail: true, Strings: func(e *AlertEnv) []string { return e.Causes }},
	{Name: "moved_by", Type: TypeStrings, Strings: func(e *AlertEnv) []string { return e.MovedBy }},
	{Name: "moved_to", Type: TypeString, String: func(e *AlertEnv) string { return e.MovedTo }},
	{Name: "moved_at", Type: TypeString, String: func(e *AlertEnv) string { return e.MovedAt }},
	{Name: "aborted", Type: TypeString, String: func(e *AlertEnv) string { return e.Aborted }},
	{Name: "stage_for", Type: TypeFloat, Float: func(e *AlertEnv) float64 { return e.StageFor }},
	{Name: "observe", Type: TypeFloat, Float: func(e *AlertEnv) float64 { return e.Observe }},
	{Name: "stage_observed", Type: TypeFloat, Float: func(e *AlertEnv) float64 { return e.StageObserved }},
	{Name: "out_of_reach", Type: TypeBool, Bool: func(e *AlertEnv) bool { return e.OutOfReach }},
	{Name: "waiting", Type: TypeStrings, Detail: true, Strings: func(e *AlertEnv) []string { return e.Waiting }},
	{Name: "weight", Type: TypeInt, Int: func(e *AlertEnv) int { return e.Weight }},
	{Name: "drill", Type: TypeBool, Bool: func(e *AlertEnv) bool { return e.Drill }},
	{Name: "actuator", Type: TypeString, String: func(e *AlertEnv) string { return e.Actuator }},
	{Name: "failing_for", Type: TypeFloat, Float: func(e *AlertEnv) float64 { return e.FailingFor }},
	{Name: "error", Type: TypeString, String: func(e *AlertEnv) string { return e.Error }},
}

// AlertVars are the alert language's variables, in AlertEnv's order.
func AlertVars() []AlertVar { return alertVars }

// LookupAlertVar is the variable name, ok false when there is none.
func LookupAlertVar(name string) (v AlertVar, ok bool) {
	for _, v := range alertVars {
		if v.Name == name {
			return v, true
		}
	}
	return AlertVar{}, false
}

// Value is v's value in e, as an expr-lang environment holds it.
func (v AlertVar) Value(e *AlertEnv) any {
	switch v.Type {
	case TypeBool:
		return v.Bool(e)
	case TypeInt:
		return v.Int(e)
	case TypeFloat:
		return v.Float(e)
	case TypeString:
		return v.String(e)
	case TypeStrings:
		return v.Strings(e)
	case TypeFloatMap:
		return v.FloatMap(e)
	default:
		return v.IntMap(e)
	}
}
