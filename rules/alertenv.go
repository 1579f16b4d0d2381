package rules

import (
	"errors"
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"text/template"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/ast"
	"github.com/expr-lang/expr/file"
	"github.com/expr-lang/expr/vm"
)

// AlertEnv is what an alert rule's expr sees.
type AlertEnv struct {
	Route    string             `expr:"route"`
	Service  string             `expr:"service"`
	Score    float64            `expr:"score"`
	Level    string             `expr:"level"`    // normal, warm, shed, failover, manual
	Stage    int                `expr:"stage"`    // failback stage, 0 = none
	Signals  map[string]float64 `expr:"signals"`  // every configured signal; NaN when not ok
	Missing  []string           `expr:"missing"`  // signals without data that hold the route
	Degraded bool               `expr:"degraded"` // service scope: every route bad
	Weights  map[string]int     `expr:"weights"`  // service scope: traffic split
	// Evidence is what the counted signals showed, one line each
	// ("error_body_ratio: 120 of 300 calls in 2m: ≥ 31.7 % at 99.9 %").
	Evidence []string `expr:"evidence"`
	// Drill: the route (service scope: a route of the service) is in a
	// fault drill; its alerts carry the label drill="true".
	Drill bool `expr:"drill"`
	// Actuator scope: the actuator, how long it has been failing without a
	// success (seconds, 0 while it works) and its last error.
	Actuator   string  `expr:"actuator"`
	FailingFor float64 `expr:"failing_for"`
	Error      string  `expr:"error"`
}

// TemplateData is what an alert's summary and description templates see.
// Its fields mean the same as those of AlertEnv.
type TemplateData struct {
	Route    string
	Service  string
	Score    float64
	Level    string
	Stage    int
	Signals  map[string]float64
	Missing  []string
	Degraded bool
	Weights  map[string]int
	Evidence []string
	Drill    bool

	Actuator   string
	FailingFor float64
	Error      string
}

// TemplateData returns the template view of the same evaluation.
func (e AlertEnv) TemplateData() TemplateData {
	return TemplateData(e)
}

// CompileAlertExpr compiles an alert condition against AlertEnv; the
// program yields a bool. Run it with expr.Run(program, env) where env is an
// AlertEnv. Compile errors are one line, with the line:column in src.
func CompileAlertExpr(src string) (*vm.Program, error) {
	if strings.TrimSpace(src) == "" {
		return nil, errors.New("expression is empty")
	}
	program, err := expr.Compile(src, expr.Env(AlertEnv{}), expr.AsBool())
	if err != nil {
		var ferr *file.Error
		if errors.As(err, &ferr) {
			return nil, fmt.Errorf("%s (%d:%d)", ferr.Message, ferr.Line, ferr.Column)
		}
		return nil, err
	}
	return program, nil
}

// AlertSignalRefs returns the signal names a compiled alert condition reads
// through a constant key (signals.x or signals["x"]), in order of appearance.
func AlertSignalRefs(program *vm.Program) []string {
	return alertInputsOf(program).refs
}

// AlertInputs is what of its AlertEnv a compiled alert condition reads, as
// far as its syntax shows: a condition reading nothing else gives the same
// result for environments equal in these.
type AlertInputs struct {
	// Fields are the expr names of the fields it reads, signals aside.
	Fields []string
	// Signals are the signals it reads through a constant key, each once.
	Signals []string
	// AllSignals: it reads the signals map otherwise (a computed key, the
	// whole map), so it may read any signal.
	AllSignals bool
	// All: it reads the environment in a way not listed above ($env, a
	// method, a variable): take it as reading every field.
	All bool
}

// AlertExprInputs returns what a compiled alert condition reads of its
// environment. An identifier that is no field of AlertEnv (a variable of
// let, $env, a method) makes it All: conservative, never too little.
func AlertExprInputs(program *vm.Program) AlertInputs {
	v := alertInputsOf(program)
	in := AlertInputs{All: v.other, AllSignals: v.signalsRead > len(v.refs)}
	for _, name := range v.refs {
		if !slices.Contains(in.Signals, name) {
			in.Signals = append(in.Signals, name)
		}
	}
	for _, name := range v.fields {
		if !slices.Contains(in.Fields, name) {
			in.Fields = append(in.Fields, name)
		}
	}
	return in
}

// alertEnvFields are the expr names of AlertEnv's fields.
var alertEnvFields = func() map[string]bool {
	t := reflect.TypeFor[AlertEnv]()
	names := make(map[string]bool, t.NumField())
	for i := range t.NumField() {
		names[t.Field(i).Tag.Get("expr")] = true
	}
	return names
}()

func alertInputsOf(program *vm.Program) *alertInputs {
	v := &alertInputs{}
	node := program.Node()
	ast.Walk(&node, v)
	return v
}

// alertInputs is an ast.Visitor collecting what a condition reads of its
// environment: the keys read from signals through a constant key (refs),
// how often signals is read at all, the other fields, and whether any
// other identifier appears.
type alertInputs struct {
	refs        []string
	signalsRead int
	fields      []string
	other       bool
}

// Visit records n when it reads the environment.
func (v *alertInputs) Visit(n *ast.Node) {
	switch n := (*n).(type) {
	case *ast.IdentifierNode:
		switch {
		case n.Value == "signals":
			v.signalsRead++
		case alertEnvFields[n.Value]:
			v.fields = append(v.fields, n.Value)
		default:
			v.other = true
		}
	case *ast.MemberNode:
		if id, ok := n.Node.(*ast.IdentifierNode); ok && id.Value == "signals" {
			if key, ok := n.Property.(*ast.StringNode); ok {
				v.refs = append(v.refs, key.Value)
			}
		}
	}
}

// AlertExprReadsClock reports whether a compiled alert condition calls
// now(), the one expr built-in whose result is not a function of the
// environment: a condition that does not may be taken as unchanged while
// its environment is.
func AlertExprReadsClock(program *vm.Program) bool {
	v := &clockCalls{}
	node := program.Node()
	ast.Walk(&node, v)
	return v.found
}

// clockCalls is an ast.Visitor looking for calls of now().
type clockCalls struct{ found bool }

// Visit records a call of the now built-in.
func (v *clockCalls) Visit(n *ast.Node) {
	if b, ok := (*n).(*ast.BuiltinNode); ok && b.Name == "now" {
		v.found = true
	}
}

// TemplateFuncs returns the functions alert templates may call besides the
// text/template built-ins:
//
//	pct x                 x*100 (a ratio as a percentage)
//	join list sep         strings.Join
//	humanizeDuration d    a duration (time.Duration, or seconds as a number) like "1h 5m 3s"
func TemplateFuncs() template.FuncMap {
	return template.FuncMap{
		"pct":              func(x float64) float64 { return x * 100 },
		"join":             func(list []string, sep string) string { return strings.Join(list, sep) },
		"humanizeDuration": humanizeDuration,
	}
}

// ParseTemplate parses an alert summary or description with TemplateFuncs.
// Execute it with a TemplateData.
func ParseTemplate(name, text string) (*template.Template, error) {
	return template.New(name).Funcs(TemplateFuncs()).Parse(text)
}

// humanizeDuration formats a time.Duration, or a number of seconds, as
// days, hours, minutes and seconds ("1d 2h 3m 4s"); under a second it keeps
// Go's notation ("250ms").
func humanizeDuration(v any) (string, error) {
	var d time.Duration
	switch x := v.(type) {
	case time.Duration:
		d = x
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return fmt.Sprint(x), nil
		}
		d = time.Duration(x * float64(time.Second))
	case int:
		d = time.Duration(x) * time.Second
	case int64:
		d = time.Duration(x) * time.Second
	default:
		return "", fmt.Errorf("humanizeDuration: want a duration or seconds, got %T", v)
	}
	sign := ""
	if d < 0 {
		sign, d = "-", -d
	}
	if d < time.Second {
		return sign + d.String(), nil
	}
	d = d.Round(time.Second)
	var parts []string
	for _, u := range []struct {
		size time.Duration
		unit string
	}{{24 * time.Hour, "d"}, {time.Hour, "h"}, {time.Minute, "m"}, {time.Second, "s"}} {
		if n := d / u.size; n > 0 {
			parts = append(parts, fmt.Sprintf("%d%s", n, u.unit))
			d -= n * u.size
		}
	}
	return sign + strings.Join(parts, " "), nil
}
