package evaluator

import (
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
)

// TestAlertExpressionErrorsAreReported adds a rule whose expression passes
// validation (check runs it on sample data, route "route") but divides by
// zero at run time on real routes (stage is 0 on a healthy route): every
// route's evaluation must be reported as an alert_error
// event, not pass silently as "not firing".
func TestAlertExpressionErrorsAreReported(t *testing.T) {
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	cfg.Alerts = append(cfg.Alerts, rules.AlertRuleConfig{Name: "HermesBroken", Tier: "B", Scope: rules.ScopeRoute, Expr: `route != "route" && 1 % stage == 0 || score < 0`})
	if err := cfg.Validate(); err != nil {
		t.Fatalf("the broken rule should pass validation (it fails only at run time): %v", err)
	}
	p, err := NewPolicy(cfg.Rules())
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Unix(1_700_000_000, 0).UTC()
	_, evs := Step(p, State{}, Input{Snapshot: snap(p, t0, nil)}, t0)
	var routes []string
	for _, e := range evs {
		if e.Type == EventAlertError && e.Name == "HermesBroken" {
			routes = append(routes, e.Route)
			if !strings.Contains(strings.Join(e.Reasons, " "), "divide by zero") {
				t.Errorf("reason %q does not say why", e.Reasons)
			}
		}
	}
	if len(routes) != len(p.Routes()) {
		t.Errorf("alert_error events for routes %v, want one per route %v", routes, p.Routes())
	}
}
