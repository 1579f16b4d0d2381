package evaluator

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
)

// countingText is a summary that counts its renders.
type countingText struct{ renders *int }

func (c countingText) Render(d rules.TemplateData) (string, error) {
	*c.renders++
	return "always on " + d.Route, nil
}

// TestStepRendersNoText: Step keeps a firing alert's rule and the values
// its condition held with, and renders no summary or description; Text
// renders them once asked (the alerting stage, when it sends the alert),
// and the alert's event renders to the same (Policy.EventText).
func TestStepRendersNoText(t *testing.T) {
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Alerts = append(cfg.Alerts, rules.AlertRuleConfig{Name: "HermesAlways", Tier: "B", Scope: rules.ScopeRoute, Expr: `score >= 0`,
		Summary: "always on {{ .Route }}", RunbookURL: "https://runbooks.example.com/always"})
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	pol := cfg.Rules()
	renders := 0
	pol.Alerts[len(pol.Alerts)-1].SummaryText = countingText{&renders}
	p, err := NewPolicy(pol)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_700_000_000, 0).UTC()
	st, evs := Step(p, State{}, Input{Snapshot: snap(p, t0, nil)}, t0)
	if renders != 0 {
		t.Fatalf("Step rendered %d summaries", renders)
	}
	route := p.Routes()[0]
	var a *Alert
	for _, al := range st.Alerts {
		if al.Rule == "HermesAlways" && al.Route == route {
			a = al
		}
	}
	if a == nil || a.State != StateFiring || a.Env == nil || a.Annotations != nil {
		t.Fatalf("alert %+v, want firing with its values and no text", a)
	}
	ann := a.Text()
	if renders != 1 || ann["summary"] != "always on "+route || ann["runbook_url"] != "https://runbooks.example.com/always" ||
		!strings.HasPrefix(ann["description"], "score 100.0, level normal; ") {
		t.Errorf("Text rendered %d times: %v", renders, ann)
	}
	found := false
	for _, e := range evs {
		if e.Type == EventAlert && e.Name == "HermesAlways" && e.Route == route {
			found = true
			if got := p.EventText(&e); e.Annotations != nil || !maps.Equal(got, ann) {
				t.Errorf("event annotations %v, rendered %v; want none, and %v", e.Annotations, got, ann)
			}
		}
	}
	if !found {
		t.Error("no firing event")
	}
}
