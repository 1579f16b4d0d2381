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

	"github.com/hermes-failover/hermes/evaluator/traffic"
	"github.com/hermes-failover/hermes/rules"
)

// alertRule is a compiled alert rule of the policy.
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

// evalAlerts moves every alert instance by one tick and returns its events:
// rule by rule, then services (service scope before its routes) in config
// order, then actuators in config order. Each target's environment is built
// once and shared by the rules.
func evalAlerts(p *Policy, prev map[string]*Alert, s State, snap Snapshot, now time.Time) (map[string]*Alert, []Event) {
	next := map[string]*Alert{}
	type ordered struct {
		rule, target int
		ev           Event
	}
	var out []ordered
	target := 0
	eval := func(scope string, build func() rules.AlertEnv) {
		var env rules.AlertEnv
		built := false
		for ri, r := range p.alerts {
			if r.cfg.Scope != scope {
				continue
			}
			if !built {
				env, built = build(), true
			}
			res, err := expr.Run(r.prog, env)
			cond, isBool := res.(bool)
			if err == nil && !isBool {
				err = fmt.Errorf("the expression gave %T %v, not a boolean", res, res)
			}
			if err != nil {
				out = append(out, ordered{ri, target, Event{Time: now, Type: EventAlertError, Name: r.cfg.Name,
					Service: env.Service, Route: env.Route, Reasons: []string{err.Error()}}})
			}
			key := AlertKey(r.cfg.Name, env.Service, env.Route, env.Actuator)
			a, ev := stepAlert(r, prev[key], cond, env, now)
			if a != nil {
				next[key] = a
			}
			if ev != nil {
				out = append(out, ordered{ri, target, *ev})
			}
		}
		target++
	}
	for _, svc := range p.Config.Services {
		eval(rules.ScopeService, func() rules.AlertEnv { return alertEnv(s, svc, "") })
		for _, route := range svc.Routes {
			eval(rules.ScopeRoute, func() rules.AlertEnv { return alertEnv(s, svc, route) })
		}
	}
	for _, name := range p.actuators {
		eval(rules.ScopeActuator, func() rules.AlertEnv { return actuatorEnv(snap.Actuators[name], name, now) })
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.rule != b.rule {
			return a.rule < b.rule
		}
		return a.target < b.target
	})
	evs := make([]Event, len(out))
	for i, o := range out {
		evs[i] = o.ev
	}
	return next, evs
}

// stepAlert moves one alert instance by one tick, as Prometheus's alerting
// rule does: inactive → pending when the condition holds, pending → firing
// after for, firing → inactive once it has not held for keep_firing_for.
func stepAlert(r *alertRule, prev *Alert, cond bool, env rules.AlertEnv, now time.Time) (*Alert, *Event) {
	var a Alert
	if prev != nil {
		a = *prev
	}
	if a.State == StateInactive && !cond {
		if prev != nil && prev.Retained(now) {
			return &a, nil
		}
		return nil, nil
	}
	if cond {
		a.LastTrue = now
		if a.State == StateInactive {
			a = Alert{Rule: r.cfg.Name, Tier: r.cfg.Tier, Service: env.Service, Route: env.Route, Actuator: env.Actuator,
				State: StatePending, ActiveAt: now, LastTrue: now}
		}
		// Labels are fixed when the alert becomes active, so its identity
		// (fingerprint) in Alertmanager does not change while it fires.
		if a.Labels == nil {
			a.Labels = alertLabels(r.cfg, env.Service, env.Route, env.Level, env.Actuator)
		}
		a.Annotations = renderAnnotations(r, env)
		if a.State == StatePending && now.Sub(a.ActiveAt) >= r.cfg.For {
			a.State = StateFiring
			a.FiredAt = now
			return &a, alertEvent(&a, now)
		}
		return &a, nil
	}
	// Condition false.
	if a.State == StateFiring && now.Sub(a.LastTrue) < r.cfg.KeepFiringFor {
		return &a, nil
	}
	wasFiring := a.State == StateFiring
	a.State = StateInactive
	a.ResolvedAt = now
	if wasFiring {
		return &a, alertEvent(&a, now)
	}
	return nil, nil
}

func alertEvent(a *Alert, now time.Time) *Event {
	state := "firing"
	if a.State == StateInactive {
		state = "resolved"
	}
	at := a.ActiveAt
	return &Event{Time: now, Type: EventAlert, Service: a.Service, Route: a.Route, Name: a.Rule,
		Tier: a.Tier, State: state, Labels: maps.Clone(a.Labels), Annotations: maps.Clone(a.Annotations), ActiveAt: &at}
}

// alertEnv is what an alert rule sees for one service (and route).
func alertEnv(s State, svc rules.ServiceConfig, route string) rules.AlertEnv {
	env := rules.AlertEnv{Service: svc.Name, Route: route, Signals: map[string]float64{}, Score: 100, Level: traffic.Normal.String()}
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

// actuatorEnv is what an actuator-scope rule sees for one actuator; an
// actuator the snapshot says nothing about is taken as working.
func actuatorEnv(h ActuatorHealth, name string, now time.Time) rules.AlertEnv {
	env := rules.AlertEnv{Actuator: name, Signals: map[string]float64{}, Score: 100, Level: traffic.Normal.String()}
	if !h.OK && !h.FailingSince.IsZero() {
		env.FailingFor = now.Sub(h.FailingSince).Seconds()
		env.Error = h.Error
	}
	return env
}

// renderAnnotations renders an alert's summary and description; a route's
// alert without a description gets the score breakdown.
func renderAnnotations(r *alertRule, env rules.AlertEnv) map[string]string {
	data := env.TemplateData()
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
	return ann
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
