package dashboards

import (
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
)

// TestReplicas: with two Hermes replicas every Hermes series exists twice.
// Every selector of Hermes's series (and up) is filtered by the job and
// instance variables and aggregated (max by, sum by, …), so a panel shows
// one line per route, not one per replica; route-level panels do not keep
// instance.
func TestReplicas(t *testing.T) {
	d := load(t)
	check := func(where, q string) {
		expr := parse(t, where, q)
		if expr == nil {
			return
		}
		parser.Inspect(expr, func(n parser.Node, path []parser.Node) error {
			vs, ok := n.(*parser.VectorSelector)
			if !ok || !(strings.HasPrefix(vs.Name, "hermes_") || vs.Name == "up") {
				return nil
			}
			for _, v := range []string{"job", "instance"} {
				if !hasVarMatcher(vs.LabelMatchers, v) {
					t.Errorf("%s: %s is not filtered by %s=~\"$%s\"", where, vs.Name, v, v)
				}
			}
			var agg *parser.AggregateExpr
			for i := len(path) - 1; i >= 0 && agg == nil; i-- {
				agg, _ = path[i].(*parser.AggregateExpr)
			}
			switch {
			case agg == nil:
				t.Errorf("%s: %s is not aggregated over replicas", where, vs.Name)
			case agg.Without:
				t.Errorf("%s: %s is aggregated without (…); name what it keeps", where, vs.Name)
			case hasMatcher(vs.LabelMatchers, "route") && slices.Contains(agg.Grouping, "instance"):
				t.Errorf("%s: %s keeps instance: one line per replica", where, vs.Name)
			}
			return nil
		})
	}
	for _, p := range layout(d) {
		for _, tg := range p.Targets {
			check("panel "+p.Title+" target "+tg.RefID, tg.Expr)
		}
	}
	for _, a := range d.Annotations.List {
		if a.Expr != "" {
			check("annotation "+a.Name, a.Expr)
		}
	}
}

// TestRouteAlerts: Hermes sends its route alerts to Alertmanager itself, so
// Prometheus's ALERTS holds none of them; the dashboard reads them from
// hermes_alert_active_since_timestamp_seconds.
func TestRouteAlerts(t *testing.T) {
	for _, p := range layout(load(t)) {
		for _, tg := range p.Targets {
			if expr := parse(t, p.Title, tg.Expr); expr != nil && slices.Contains(metrics(expr), "hermes_alert_active_since_timestamp_seconds") {
				return
			}
		}
	}
	t.Error("no panel shows Hermes's alerts (hermes_alert_active_since_timestamp_seconds)")
}

func hasVarMatcher(ms []*labels.Matcher, name string) bool {
	for _, m := range ms {
		if m.Name == name && m.Type == labels.MatchRegexp && m.Value == variables.Replace("$"+name) {
			return true
		}
	}
	return false
}

func hasMatcher(ms []*labels.Matcher, name string) bool {
	for _, m := range ms {
		if m.Name == name {
			return true
		}
	}
	return false
}
