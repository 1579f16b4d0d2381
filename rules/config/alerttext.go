package config

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/hermes-failover/hermes/rules"
)

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
// Execute it with a rules.TemplateData.
func ParseTemplate(name, text string) (*template.Template, error) {
	return template.New(name).Funcs(TemplateFuncs()).Parse(text)
}

// alertText is a parsed summary or description: the rules.AlertText the
// core renders an alert's annotations with.
type alertText struct{ t *template.Template }

// Render executes the template on d.
func (a alertText) Render(d rules.TemplateData) (string, error) {
	var b strings.Builder
	err := a.t.Execute(&b, d)
	return b.String(), err
}

// compileAlertRule fills the compiled parts of r (rules.AlertRuleConfig's
// Cond, SummaryText and DescriptionText) from its texts. An error leaves
// the part nil: Validate reports it with the rule's file:line, and the
// core refuses a rule left without its condition.
func compileAlertRule(r *rules.AlertRuleConfig) {
	r.Cond, _, _ = CompileAlertExpr(r.Expr)
	r.SummaryText, r.DescriptionText = nil, nil
	if strings.TrimSpace(r.Summary) != "" {
		if t, err := ParseTemplate(r.Name+".summary", r.Summary); err == nil {
			r.SummaryText = alertText{t}
		}
	}
	if strings.TrimSpace(r.Description) != "" {
		if t, err := ParseTemplate(r.Name+".description", r.Description); err == nil {
			r.DescriptionText = alertText{t}
		}
	}
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
			parts = append(parts, strconv.FormatInt(int64(n), 10)+u.unit)
			d -= n * u.size
		}
	}
	return sign + strings.Join(parts, " "), nil
}
