package evaluator

import (
	"bytes"
	"fmt"
	"maps"
	"math"
	"sort"
	"strings"
	"text/template"
	"time"

	"github.com/expr-lang/expr"
	"github.com/expr-lang/expr/vm"

	"github.com/hermes-failover/hermes/rules"
)

// AlertStatus is the state of one alert instance, as in Prometheus.
type AlertStatus int

// Alert states.
const (
	AlertInactive AlertStatus = iota
	AlertPending
	AlertFiring
)

func (s AlertStatus) String() string {
	return [...]string{"inactive", "pending", "firing"}[s]
}

// AlertState is one alert instance (rule × service × route).
type AlertState struct {
	Rule     string      `json:"rule"`
	Tier     string      `json:"tier"`
	Service  string      `json:"service"`
	Route    string      `json:"route,omitempty"`
	Status   AlertStatus `json:"status"`
	ActiveAt time.Time   `json:"active_at"` // condition first true (pending)
	FiredAt  time.Time   `json:"fired_at,omitzero"`
	// LastTrue is the last tick the condition held (for keep_firing_for).
	LastTrue    time.Time         `json:"last_true,omitzero"`
	ResolvedAt  time.Time         `json:"resolved_at,omitzero"`
	Labels      map[string]string `json:"labels"`
	Annotations map[string]string `json:"annotations"`
}

type alertRule struct {
	cfg         rules.AlertRuleConfig
	prog        *vm.Program
	summary     *template.Template
	description *template.Template
}

func compileAlert(a rules.AlertRuleConfig) (*alertRule, error) {
	prog, err := rules.CompileAlertExpr(a.Expr)
	if err != nil {
		return nil, fmt.Errorf("expr: %w", err)
	}
	r := &alertRule{cfg: a, prog: prog}
	if r.summary, err = rules.ParseTemplate(a.Name+".summary", a.Summary); err != nil {
		return nil, fmt.Errorf("summary: %w", err)
	}
	if r.description, err = rules.ParseTemplate(a.Name+".description", a.Description); err != nil {
		return nil, fmt.Errorf("description: %w", err)
	}
	return r, nil
}

// Tier severities, following the monitoring-mixin convention.
var tierSeverity = map[string]string{rules.TierA: "critical", rules.TierB: "warning", rules.TierC: "info"}

func alertKey(rule, service, route string) string { return rule + "/" + service + "/" + route }

// evalAlerts moves every alert instance by one tick and returns its events.
// Each (service, route) environment is built once and shared by the rules.
func evalAlerts(p *Policy, prev map[string]*AlertState, s State, now time.Time) (map[string]*AlertState, []Event) {
	next := map[string]*AlertState{}
	type ordered struct {
		rule, svc, target int
		ev                Event
	}
	var out []ordered
	for si, svc := range p.Config.Services {
		targets := append([]string{""}, svc.Routes...) // "" is the service scope
		for ti, route := range targets {
			var env rules.AlertEnv
			built := false
			for ri, r := range p.alerts {
				if (r.cfg.Scope == rules.ScopeService) != (route == "") {
					continue
				}
				if !built {
					env, built = alertEnv(p, s, svc, route), true
				}
				ok, err := expr.Run(r.prog, env)
				cond := err == nil && ok == true
				key := alertKey(r.cfg.Name, svc.Name, route)
				as, ev := stepAlert(r, prev[key], cond, env, now)
				if as != nil {
					next[key] = as
				}
				if ev != nil {
					out = append(out, ordered{ri, si, ti, *ev})
				}
			}
		}
	}
	// Events come rule by rule, then in service and route order.
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.rule != b.rule {
			return a.rule < b.rule
		}
		if a.svc != b.svc {
			return a.svc < b.svc
		}
		return a.target < b.target
	})
	evs := make([]Event, len(out))
	for i, o := range out {
		evs[i] = o.ev
	}
	return next, evs
}

func stepAlert(r *alertRule, prev *AlertState, cond bool, env rules.AlertEnv, now time.Time) (*AlertState, *Event) {
	var as AlertState
	if prev != nil {
		as = *prev
	}
	if as.Status == AlertInactive && !cond {
		// Keep resolved alerts for 15 minutes, so senders can re-send the resolve.
		if prev != nil && now.Sub(prev.ResolvedAt) < 15*time.Minute {
			return &as, nil
		}
		return nil, nil
	}
	if cond {
		as.LastTrue = now
		if as.Status == AlertInactive {
			as = AlertState{Rule: r.cfg.Name, Tier: r.cfg.Tier, Service: env.Service, Route: env.Route,
				Status: AlertPending, ActiveAt: now, LastTrue: now}
		}
		// Labels are fixed when the alert becomes active, so its identity
		// (fingerprint) in Alertmanager does not change while it fires.
		labels, ann := renderAlert(r, env)
		if as.Labels == nil {
			as.Labels = labels
		}
		as.Annotations = ann
		if as.Status == AlertPending && now.Sub(as.ActiveAt) >= r.cfg.For {
			as.Status = AlertFiring
			as.FiredAt = now
			return &as, alertEvent(r, &as, now)
		}
		return &as, nil
	}
	// Condition false.
	if as.Status == AlertFiring && now.Sub(as.LastTrue) < r.cfg.KeepFiringFor {
		return &as, nil
	}
	wasFiring := as.Status == AlertFiring
	as.Status = AlertInactive
	as.ResolvedAt = now
	if wasFiring {
		return &as, alertEvent(r, &as, now)
	}
	return nil, nil
}

func alertEvent(r *alertRule, as *AlertState, now time.Time) *Event {
	state := "firing"
	if as.Status == AlertInactive {
		state = "resolved"
	}
	at := as.ActiveAt
	return &Event{Time: now, Type: EventAlert, Service: as.Service, Route: as.Route, Name: r.cfg.Name,
		Tier: r.cfg.Tier, State: state, Labels: maps.Clone(as.Labels), Annotations: maps.Clone(as.Annotations), ActiveAt: &at}
}

// alertEnv is what an alert rule sees for one service (and route).
func alertEnv(p *Policy, s State, svc rules.ServiceConfig, route string) rules.AlertEnv {
	env := rules.AlertEnv{Service: svc.Name, Route: route, Signals: map[string]float64{}, Score: 100, Level: Normal.String()}
	if ss := s.Services[svc.Name]; ss != nil {
		env.Degraded = ss.Degraded
		env.Weights = ss.Weights
	}
	if route == "" {
		// Service scope: the worst route speaks for the service.
		for _, r := range svc.Routes {
			if rs := s.Routes[r]; rs != nil && rs.Score.Value < env.Score {
				env.Score = rs.Score.Value
			}
		}
		return env
	}
	rs := s.Routes[route]
	if rs == nil {
		return env
	}
	env.Score, env.Level, env.Stage = rs.Score.Value, rs.Level.String(), rs.Stage
	env.Missing = rs.Score.Missing
	for _, c := range rs.Score.Contributions {
		if c.Status == StatusOK {
			env.Signals[c.Signal] = c.Value
		} else {
			env.Signals[c.Signal] = math.NaN()
		}
	}
	return env
}

func renderAlert(r *alertRule, env rules.AlertEnv) (map[string]string, map[string]string) {
	labels := map[string]string{"alertname": r.cfg.Name, "severity": tierSeverity[r.cfg.Tier], "tier": r.cfg.Tier, "service": env.Service}
	if env.Route != "" {
		labels["route"] = env.Route
		labels["level"] = env.Level
	}
	for k, v := range r.cfg.Labels {
		labels[k] = v
	}
	data := rules.TemplateData{Route: env.Route, Service: env.Service, Score: env.Score, Level: env.Level,
		Stage: env.Stage, Signals: env.Signals, Missing: env.Missing, Degraded: env.Degraded, Weights: env.Weights}
	ann := map[string]string{}
	for name, t := range map[string]*template.Template{"summary": r.summary, "description": r.description} {
		var b bytes.Buffer
		if err := t.Execute(&b, data); err != nil {
			b.Reset()
			fmt.Fprintf(&b, "template error: %v", err)
		}
		if s := strings.TrimSpace(b.String()); s != "" {
			ann[name] = s
		}
	}
	if _, ok := ann["description"]; !ok && env.Route != "" {
		ann["description"] = scoreBreakdown(env)
	}
	if r.cfg.RunbookURL != "" {
		ann["runbook_url"] = r.cfg.RunbookURL
	}
	return labels, ann
}

// scoreBreakdown is the default description: score, level and signals.
func scoreBreakdown(env rules.AlertEnv) string {
	names := make([]string, 0, len(env.Signals))
	for n := range env.Signals {
		names = append(names, n)
	}
	sort.Strings(names)
	var b strings.Builder
	fmt.Fprintf(&b, "score %.1f, level %s", env.Score, env.Level)
	for _, n := range names {
		if v := env.Signals[n]; !math.IsNaN(v) {
			fmt.Fprintf(&b, "; %s=%.3g", n, v)
		}
	}
	if len(env.Missing) > 0 {
		fmt.Fprintf(&b, "; missing: %s", strings.Join(env.Missing, ", "))
	}
	return b.String()
}
