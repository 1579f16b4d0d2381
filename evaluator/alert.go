package evaluator

import (
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/hermes-failover/hermes/labelname"
	"github.com/hermes-failover/hermes/rules"
)

// AlertState is the state of one alert, as in Prometheus.
type AlertState int

// Alert states.
const (
	StateInactive AlertState = iota
	StatePending
	StateFiring
)

func (s AlertState) String() string {
	switch s {
	case StateInactive:
		return "inactive"
	case StatePending:
		return "pending"
	case StateFiring:
		return "firing"
	}
	return "alertstate(" + strconv.Itoa(int(s)) + ")"
}

// ResolvedRetention is how long a resolved alert is kept, so that senders
// re-send its resolve (Prometheus keeps re-sending for the same 15 minutes).
const ResolvedRetention = 15 * time.Minute

// Alert is one instance of an alert rule: per route (route scope), per
// service (service scope) or per actuator (actuator scope). This file owns
// an alert's identity (key, labels, severity), its lifetime (resolved
// retention) and its export for restore (ForStateLabels, RestoreAlert):
// the sender, the saved-state package and the status API call these.
type Alert struct {
	Rule     string     `json:"rule"`
	Tier     string     `json:"tier"`
	Service  string     `json:"service,omitempty"`
	Route    string     `json:"route,omitempty"`
	Actuator string     `json:"actuator,omitempty"`
	State    AlertState `json:"state"`
	ActiveAt time.Time  `json:"active_at"` // condition first true (pending)
	FiredAt  time.Time  `json:"fired_at,omitzero"`
	// LastTrue is the last tick the condition held (for keep_firing_for).
	LastTrue   time.Time         `json:"last_true,omitzero"`
	ResolvedAt time.Time         `json:"resolved_at,omitzero"`
	Labels     map[string]string `json:"labels"`
	// Annotations are the alert's fixed texts: a restored alert's
	// summary (RestoreAlert), until its condition holds again. The core
	// renders no template: an alert whose condition held keeps its rule
	// and Env, and Text renders them when the alert is sent or shown.
	Annotations map[string]string `json:"annotations"`
	// Env is the environment of the last tick the condition held: the
	// values the rule's summary and description render from.
	Env *rules.AlertEnv `json:"-"`
	// rule is the rule whose texts render Env.
	rule *rules.AlertRuleConfig
}

// Text is the alert's annotations as Alertmanager gets them (summary,
// description, runbook_url): its rule's texts rendered from Env, the
// values of the last tick its condition held, else its fixed Annotations.
// The alerting stage renders them when it sends the alert, the status
// page when it shows it; Step never does.
func (a *Alert) Text() map[string]string {
	if a.rule == nil || a.Env == nil {
		return a.Annotations
	}
	return a.rule.Annotations(a.Env)
}

// EventText is the annotations of e, an alert event of p's rules, as
// Text renders those of its alert; e.Annotations for any other event.
// Whatever shows or writes an event's annotations (the audit log, a
// backtest's timeline) renders them with it.
func (p *Policy) EventText(e *Event) map[string]string {
	if e.Env == nil {
		return e.Annotations
	}
	i := slices.IndexFunc(p.alerts, func(r *alertRule) bool { return r.cfg.Name == e.Name })
	if i < 0 {
		return e.Annotations
	}
	return p.alerts[i].cfg.Annotations(e.Env)
}

// Active reports whether the alert is pending or firing.
func (a *Alert) Active() bool { return a.State == StatePending || a.State == StateFiring }

// Key is the alert's key in State.Alerts.
func (a *Alert) Key() string { return AlertKey(a.Rule, a.Service, a.Route, a.Actuator) }

// Retained reports whether a resolved alert is still kept at now.
func (a *Alert) Retained(now time.Time) bool {
	return a.State == StateInactive && now.Sub(a.ResolvedAt) < ResolvedRetention
}

// AlertKey identifies an alert instance: its rule and target.
func AlertKey(rule, service, route, actuator string) string {
	k := rule + "/" + service + "/" + route
	if actuator != "" {
		k += "/" + actuator
	}
	return k
}

// Severity is the severity label of a tier, following the monitoring-mixin
// convention: A critical (page), B warning (ticket), C info.
func Severity(tier string) string {
	switch tier {
	case rules.TierA:
		return "critical"
	case rules.TierB:
		return "warning"
	case rules.TierC:
		return "info"
	}
	return ""
}

// alertLabels are an alert's labels: alertname, severity, tier, its target
// (service and route with the route's level when the alert became active,
// or actuator), drill="true" when it became active while its route (or a
// route of its service) was in a drill, then the rule's own labels.
func alertLabels(r rules.AlertRuleConfig, service, route, level, actuator string, drill bool) map[string]string {
	labels := map[string]string{"alertname": r.Name, "severity": Severity(r.Tier), "tier": r.Tier}
	if service != "" {
		labels[labelname.Service] = service
	}
	if route != "" {
		labels[labelname.Route] = route
		labels["level"] = level
	}
	if actuator != "" {
		labels[labelname.Actuator] = actuator
	}
	if drill {
		labels["drill"] = "true"
	}
	maps.Copy(labels, r.Labels)
	return labels
}

// ForStateLabels are the labels of the series that carries an active alert
// across restarts (like Prometheus's ALERTS_FOR_STATE): the alert's identity
// (alertname and target), what people filter on (tier, severity), and level
// and drill, the labels RestoreAlert cannot derive from the configuration. The
// series' value is the Unix time the alert became active.
var ForStateLabels = []string{"alertname", labelname.Service, labelname.Route, labelname.Actuator, "tier", "severity", "level", "drill"}

// ForStateValues are the values of ForStateLabels for a.
func (a *Alert) ForStateValues() []string {
	fallback := map[string]string{"alertname": a.Rule, labelname.Service: a.Service, labelname.Route: a.Route, labelname.Actuator: a.Actuator,
		"tier": a.Tier, "severity": Severity(a.Tier)}
	vals := make([]string, len(ForStateLabels))
	for i, l := range ForStateLabels {
		v, ok := a.Labels[l]
		if !ok {
			v = fallback[l]
		}
		vals[i] = v
	}
	return vals
}

// RestoreAlert rebuilds an active alert from its saved labels (see
// ForStateLabels) and the time it became active, at now. It reports false
// for labels that do not name a rule and target of p: an unknown rule,
// service, route or actuator, or a target of the wrong scope. The alert is
// firing when activeAt + for ≤ now (FiredAt is then the first tick at or
// after that), else pending; its labels are rebuilt exactly as the rule
// renders them, so Alertmanager sees the same alert (no second page), and
// LastTrue is now, so keep_firing_for counts from the restart. Its
// annotations say it was restored until its condition holds again.
func (p *Policy) RestoreAlert(labels map[string]string, activeAt, now time.Time) (*Alert, bool) {
	name, service, route, actuator := labels["alertname"], labels[labelname.Service], labels[labelname.Route], labels[labelname.Actuator]
	i := slices.IndexFunc(p.alerts, func(r *alertRule) bool { return r.cfg.Name == name })
	if i < 0 {
		return nil, false
	}
	r := p.alerts[i].cfg
	switch r.Scope {
	case rules.ScopeActuator:
		if service != "" || route != "" || !slices.Contains(p.actuators, actuator) {
			return nil, false
		}
	case rules.ScopeService:
		if _, ok := p.services[service]; !ok || route != "" || actuator != "" {
			return nil, false
		}
	default:
		if svc, ok := p.services[service]; !ok || !slices.Contains(svc.Routes, route) || actuator != "" {
			return nil, false
		}
	}
	if activeAt.After(now) {
		activeAt = now
	}
	a := &Alert{Rule: name, Tier: r.Tier, Service: service, Route: route, Actuator: actuator,
		State: StatePending, ActiveAt: activeAt, LastTrue: now,
		Labels:      alertLabels(r, service, route, labels["level"], actuator, labels["drill"] == "true"),
		Annotations: map[string]string{"summary": name + " on " + where(service, route, actuator) + ": restored after a restart of Hermes."},
	}
	if !activeAt.Add(r.For).After(now) {
		a.State = StateFiring
		a.FiredAt = firedAt(activeAt, r.For, p.Config.Global.EvaluationInterval, now)
	}
	return a, true
}

// firedAt is the first tick at or after activeAt + forDur (ticks are
// multiples of interval after activeAt, itself a tick), at most now.
func firedAt(activeAt time.Time, forDur, interval time.Duration, now time.Time) time.Time {
	t := activeAt.Add(forDur)
	if interval > 0 {
		ticks := (forDur + interval - 1) / interval
		t = activeAt.Add(ticks * interval)
	}
	if t.After(now) {
		return now
	}
	return t
}

func where(service, route, actuator string) string {
	switch {
	case actuator != "":
		return "actuator " + actuator
	case route == "":
		return "service " + service
	}
	return "route " + route + " of " + service
}
