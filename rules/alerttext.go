package rules

import (
	"math"
	"sort"
	"strconv"
	"strings"
)

// AlertText is an alert's summary or description, made by the loader
// from the rule's template (rules/config parses it with text/template).
// The core never renders it: an alert carries the values its condition
// last held with (AlertEnv), and the alerting stage renders them when it
// sends the alert (AlertRuleConfig.Annotations), as does whatever shows
// the alert to people (the status page, a backtest's timeline).
type AlertText interface {
	Render(TemplateData) (string, error)
}

// Annotations renders the summary and description of an alert of r from
// env, the values its condition held with: a text that renders only
// blanks gives none, a failing one "template error: …". A route's alert
// without a description gets the score breakdown instead; runbook_url is
// r's when set.
func (r *AlertRuleConfig) Annotations(env *AlertEnv) map[string]string {
	data := env.TemplateData()
	ann := make(map[string]string, 3)
	for _, t := range [...]struct {
		name, src string
		text      AlertText
	}{{"summary", r.Summary, r.SummaryText}, {"description", r.Description, r.DescriptionText}} {
		if strings.TrimSpace(t.src) == "" {
			continue // renders nothing
		}
		out, err := t.text.Render(data)
		if err != nil {
			out = "template error: " + err.Error()
		}
		if s := strings.TrimSpace(out); s != "" {
			ann[t.name] = s
		}
	}
	if _, ok := ann["description"]; !ok && env.Route != "" {
		ann["description"] = scoreBreakdown(env)
	}
	if r.RunbookURL != "" {
		ann["runbook_url"] = r.RunbookURL
	}
	return ann
}

// scoreBreakdown is the default description: score, level and signals.
// It is written with strconv rather than fmt (the same text: %.1f and %.3g
// of finite values) since a fleet renders it for every alerting route.
func scoreBreakdown(env *AlertEnv) string {
	names := make([]string, 0, len(env.Signals))
	for n := range env.Signals {
		names = append(names, n)
	}
	sort.Strings(names)
	b := make([]byte, 0, 64+24*len(names))
	b = append(b, "score "...)
	b = strconv.AppendFloat(b, env.Score, 'f', 1, 64)
	b = append(b, ", level "...)
	b = append(b, env.Level...)
	for _, n := range names {
		if v := env.Signals[n]; !math.IsNaN(v) {
			b = append(b, "; "...)
			b = append(b, n...)
			b = append(b, '=')
			b = strconv.AppendFloat(b, v, 'g', 3, 64)
		}
	}
	if len(env.Missing) > 0 {
		b = append(b, "; missing: "...)
		b = append(b, strings.Join(env.Missing, ", ")...)
	}
	for _, e := range env.Evidence {
		b = append(b, "; "...)
		b = append(b, e...)
	}
	return string(b)
}
