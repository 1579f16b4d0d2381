package rules

import (
	"errors"
	"fmt"
	"math"
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
	// Causes are the signals that cost the route its score, the heaviest
	// first ("soft_fail_ratio 0.28 (-58.2): 339 of 1200 calls in 1m: ≥ 24.4
	// % at 99.9 %"): what a page about a move names as its cause.
	Causes []string `expr:"causes"`
	// MovedBy are the signals that moved the route down, fixed at its
	// last move down and kept until it is back at normal, in the order and
	// words of Causes; MovedTo is the level of that move and MovedAt its
	// time (RFC 3339). Empty at normal. A page about a failover names
	// these: Causes are the costs of the tick it is rendered at.
	MovedBy []string `expr:"moved_by"`
	MovedTo string   `expr:"moved_to"`
	MovedAt string   `expr:"moved_at"`
	// Aborted is the failback of this incident that stepped back to no
	// traffic, until the next one starts ("stage 2 (30 %) at …: score 0.0
	// < 80 …"); "" when none.
	Aborted string `expr:"aborted"`
	// StageFor is how long the route has been at its failback stage
	// (seconds, 0 when none), Observe the stage's observe window
	// (seconds, failback.observe): a stage that waits well beyond it is
	// stalled.
	StageFor float64 `expr:"stage_for"`
	Observe  float64 `expr:"observe"`
	// StageObserved is StageFor in observe windows (StageFor / Observe):
	// `stage_observed >= 2` is a stage that waited twice its window.
	StageObserved float64 `expr:"stage_observed"`
	// OutOfReach (a route at a failback stage): a counted signal needs
	// more calls to show the route healthy than its window holds at the
	// rate they arrive; at this traffic the stage cannot complete
	// (Waiting says which signal and how many calls).
	OutOfReach bool `expr:"out_of_reach"`
	// Waiting is what the route waits for (the dwell of a move down, the
	// evidence and calls a failback stage needs), as the status page says
	// it.
	Waiting []string `expr:"waiting"`
	// Weight is the route's share of its service's traffic in percent
	// (route scope).
	Weight int `expr:"weight"`
	// Drill: the route (service scope: a route of the service) is in a
	// fault drill; its alerts carry the label drill="true".
	Drill bool `expr:"drill"`
	// Actuator scope: the actuator, how long it has been failing without a
	// success (seconds, 0 while it works) and its last error.
	Actuator   string  `expr:"actuator"`
	FailingFor float64 `expr:"failing_for"`
	Error      string  `expr:"error"`
}

// The alert language's variables as the core reads them without running
// an expr program (evaluator/alertcond.go decides the conditions made only
// of these in Go): by name, how to read each from an AlertEnv. With the
// expr tags of AlertEnv, the one place their names are spelled;
// TestAlertVarsAreAlertEnv keeps the two alike.
var (
	alertFloats = map[string]func(*AlertEnv) float64{
		"score":          func(e *AlertEnv) float64 { return e.Score },
		"stage_for":      func(e *AlertEnv) float64 { return e.StageFor },
		"observe":        func(e *AlertEnv) float64 { return e.Observe },
		"stage_observed": func(e *AlertEnv) float64 { return e.StageObserved },
		"failing_for":    func(e *AlertEnv) float64 { return e.FailingFor },
	}
	alertInts = map[string]func(*AlertEnv) int{
		"stage":  func(e *AlertEnv) int { return e.Stage },
		"weight": func(e *AlertEnv) int { return e.Weight },
	}
	alertStrings = map[string]func(*AlertEnv) string{
		"route":    func(e *AlertEnv) string { return e.Route },
		"service":  func(e *AlertEnv) string { return e.Service },
		"level":    func(e *AlertEnv) string { return e.Level },
		"actuator": func(e *AlertEnv) string { return e.Actuator },
		"error":    func(e *AlertEnv) string { return e.Error },
		"moved_to": func(e *AlertEnv) string { return e.MovedTo },
		"moved_at": func(e *AlertEnv) string { return e.MovedAt },
		"aborted":  func(e *AlertEnv) string { return e.Aborted },
	}
	alertBools = map[string]func(*AlertEnv) bool{
		"degraded":     func(e *AlertEnv) bool { return e.Degraded },
		"drill":        func(e *AlertEnv) bool { return e.Drill },
		"out_of_reach": func(e *AlertEnv) bool { return e.OutOfReach },
	}
	alertLists = map[string]AlertList{
		"missing":  {Get: func(e *AlertEnv) []string { return e.Missing }},
		"evidence": {Get: func(e *AlertEnv) []string { return e.Evidence }, Detail: true},
		"causes":   {Get: func(e *AlertEnv) []string { return e.Causes }, Detail: true},
		"moved_by": {Get: func(e *AlertEnv) []string { return e.MovedBy }},
		"waiting":  {Get: func(e *AlertEnv) []string { return e.Waiting }, Detail: true},
	}
	// alertMaps are the variables the language does not read by name
	// alone: signals (signals.x, signals["x"]) and weights.
	alertMaps = []string{AlertSignals, "weights"}
)

// AlertSignals is the variable holding every signal's value, read as
// signals.x or signals["x"]. It is a route's detail (see AlertList).
const AlertSignals = "signals"

// AlertList is a list variable of the alert language. Detail marks the
// route's details (its Signals, Evidence, Causes and Waiting), which the core puts
// in a route's AlertEnv only when something reads them.
type AlertList struct {
	Get    func(*AlertEnv) []string
	Detail bool
}

// AlertFloat is how to read the float variable name, ok false when name
// is none.
func AlertFloat(name string) (get func(*AlertEnv) float64, ok bool) {
	get, ok = alertFloats[name]
	return get, ok
}

// AlertInt is how to read the int variable name, ok false when name is
// none.
func AlertInt(name string) (get func(*AlertEnv) int, ok bool) {
	get, ok = alertInts[name]
	return get, ok
}

// AlertString is how to read the string variable name, ok false when name
// is none.
func AlertString(name string) (get func(*AlertEnv) string, ok bool) {
	get, ok = alertStrings[name]
	return get, ok
}

// AlertBool is how to read the boolean variable name, ok false when name
// is none.
func AlertBool(name string) (get func(*AlertEnv) bool, ok bool) {
	get, ok = alertBools[name]
	return get, ok
}

// AlertListVar is the list variable name, ok false when name is none.
func AlertListVar(name string) (AlertList, bool) {
	l, ok := alertLists[name]
	return l, ok
}

// TemplateData is what an alert's summary and description templates see.
// Its fields mean the same as those of AlertEnv.
type TemplateData struct {
	Route         string
	Service       string
	Score         float64
	Level         string
	Stage         int
	Signals       map[string]float64
	Missing       []string
	Degraded      bool
	Weights       map[string]int
	Evidence      []string
	Causes        []string
	MovedBy       []string
	MovedTo       string
	MovedAt       string
	Aborted       string
	StageFor      float64
	Observe       float64
	StageObserved float64
	OutOfReach    bool
	Waiting       []string
	Weight        int
	Drill         bool

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
	v := &signalRefs{}
	node := program.Node()
	ast.Walk(&node, v)
	return v.refs
}

// signalRefs is an ast.Visitor collecting the keys a condition reads from
// signals through a constant key.
type signalRefs struct{ refs []string }

// Visit records n when it reads signals through a constant key.
func (v *signalRefs) Visit(n *ast.Node) {
	if m, ok := (*n).(*ast.MemberNode); ok {
		if id, ok := m.Node.(*ast.IdentifierNode); ok && id.Value == AlertSignals {
			if key, ok := m.Property.(*ast.StringNode); ok {
				v.refs = append(v.refs, key.Value)
			}
		}
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
