package evaluator

import (
	"maps"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/traffic"
)

// alertRule is a compiled alert rule of the policy: its condition
// compiled (alertcond.go), its summary and description as the loader
// parsed them (rules.AlertText), which the core never renders: an alert
// carries its rule and the values its condition held with (Alert.Env),
// and the alerting stage renders them when it sends the alert.
type alertRule struct {
	cfg  rules.AlertRuleConfig
	cond Condition
}

func compileAlert(a rules.AlertRuleConfig) (*alertRule, error) {
	cond, err := CompileCondition(a.Cond, a.Expr)
	if err != nil {
		return nil, wrap("expr", err)
	}
	for _, t := range [...]struct {
		name, src string
		text      rules.AlertText
	}{{"summary", a.Summary, a.SummaryText}, {"description", a.Description, a.DescriptionText}} {
		if strings.TrimSpace(t.src) != "" && t.text == nil {
			return nil, errorString(t.name + ": its template was not parsed: build the policy with rules/config (config.Config.Rules)")
		}
	}
	return &alertRule{cfg: a, cond: cond}, nil
}

// evalAlerts moves every alert instance by one tick and returns its events,
// ordered by rule, then by target: services (service scope before its
// routes) in config order, then actuators in config order. routes are the
// route states of this tick by route index.
func evalAlerts(p *Policy, s State, routes []RouteState, snap Snapshot, now time.Time) (map[string]*Alert, []Event) {
	e := newAlertEval(p, s.Alerts, now)
	for si, svc := range p.Config.Services {
		split := s.Services[svc.Name]
		chain := chainBriefs(p, si, routes)
		e.target(rules.ScopeService, alertTarget{service: svc.Name}, func(sig map[string]float64) targetEnv {
			return targetEnv{env: alertEnv(p, s, svc, split, "", chain, nil, sig, now)}
		})
		for j, route := range svc.Routes {
			rs := &routes[p.serviceRoutes[si][j]]
			e.target(rules.ScopeRoute, alertTarget{service: svc.Name, route: route}, func(sig map[string]float64) targetEnv {
				return targetEnv{env: alertEnv(p, s, svc, split, route, nil, rs, sig, now), route: rs, p: p, now: now}
			})
		}
	}
	for _, name := range p.actuators {
		e.target(rules.ScopeActuator, alertTarget{actuator: name}, func(sig map[string]float64) targetEnv {
			return targetEnv{env: actuatorEnv(snap.Actuators[name], name, sig, now)}
		})
	}
	return e.next, e.events()
}

// alertTarget is what an alert instance is about: a service, a route of a
// service, or an actuator.
type alertTarget struct{ service, route, actuator string }

// alertEval is one tick's evaluation of the alert rules, target by target.
// One environment and one signals map serve every target in turn: nothing
// keeps an environment once its target's rules ran.
type alertEval struct {
	p       *Policy
	now     time.Time
	prev    map[alertTarget][]*Alert
	next    map[string]*Alert
	out     []orderedEvent
	targets int
	env     targetEnv
	signals map[string]float64
}

// orderedEvent is an event with the rule and target it came from.
type orderedEvent struct {
	rule, target int
	ev           Event
}

func newAlertEval(p *Policy, prev map[string]*Alert, now time.Time) *alertEval {
	e := &alertEval{p: p, now: now, prev: make(map[alertTarget][]*Alert), next: make(map[string]*Alert, len(prev)),
		signals: make(map[string]float64, len(p.Config.Signals))}
	for _, a := range prev {
		t := alertTarget{a.Service, a.Route, a.Actuator}
		e.prev[t] = append(e.prev[t], a)
	}
	return e
}

// target evaluates the rules of scope for one target, whose environment
// build writes into an empty signals map.
func (e *alertEval) target(scope string, id alertTarget, build func(signals map[string]float64) targetEnv) {
	target := e.targets
	e.targets++
	scoped := e.p.scopeAlerts[scope]
	if len(scoped) == 0 {
		return
	}
	clear(e.signals)
	e.env = build(e.signals) // the target's environment, as far as built
	env := &e.env
	prev := e.prev[id]
	var kept envCopy
	for _, ri := range scoped {
		r := e.p.alerts[ri]
		cond, err := r.cond.eval(env)
		if err != nil {
			e.out = append(e.out, orderedEvent{ri, target, Event{Time: e.now, Type: EventAlertError, Name: r.cfg.Name,
				Service: env.env.Service, Route: env.env.Route, Reasons: []string{err.Error()}}})
		}
		var was *Alert // the target's alert at the previous tick
		for _, a := range prev {
			if a.Rule == r.cfg.Name {
				was = a
			}
		}
		if !cond && was == nil {
			continue
		}
		a, ev := stepAlert(r, was, cond, env.full(), &kept, e.now)
		if a != nil {
			e.next[AlertKey(r.cfg.Name, id.service, id.route, id.actuator)] = a
		}
		if ev != nil {
			e.out = append(e.out, orderedEvent{ri, target, *ev})
		}
	}
}

// events are the tick's alert events, by rule, then target.
func (e *alertEval) events() []Event {
	sort.SliceStable(e.out, func(i, j int) bool {
		a, b := e.out[i], e.out[j]
		if a.rule != b.rule {
			return a.rule < b.rule
		}
		return a.target < b.target
	})
	evs := make([]Event, len(e.out))
	for i, o := range e.out {
		evs[i] = o.ev
	}
	return evs
}

// stepAlert moves one alert instance by one tick, as Prometheus's alerting
// rule does: inactive → pending when the condition holds, pending → firing
// after for, firing → inactive once it has not held for keep_firing_for.
// env is the target's environment; an alert whose condition holds keeps
// a copy of it (kept: one per target and tick), which its annotations
// are rendered from when it is sent or shown (Alert.Text).
func stepAlert(r *alertRule, prev *Alert, cond bool, env *rules.AlertEnv, kept *envCopy, now time.Time) (*Alert, *Event) {
	var a Alert
	if prev != nil {
		a = *prev
	}
	if a.State == StateInactive && !cond {
		if prev != nil && prev.Retained(now) {
			return prev, nil // unchanged: Step never changes an alert in place
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
			a.Labels = alertLabels(r.cfg, env.Service, env.Route, env.Level, env.Actuator, env.Drill)
		}
		a.Annotations, a.Env, a.rule = nil, kept.of(env), &r.cfg
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
		Tier: a.Tier, State: state, Labels: maps.Clone(a.Labels), Annotations: maps.Clone(a.Annotations), ActiveAt: &at, Env: a.Env}
}

// alertEnv is what an alert rule sees for one service, or one of its
// routes when route is set; chain are the briefs of the service's routes
// in its order (by index, not by name: a fleet's routes map is large), rs the
// route's, ss the service's split. Its Signals are signals, an empty map
// that routeDetails fills.
func alertEnv(p *Policy, s State, svc rules.ServiceConfig, ss *traffic.Split, route string, chain []routeBrief, rs *RouteState, signals map[string]float64, now time.Time) rules.AlertEnv {
	env := rules.AlertEnv{Service: svc.Name, Route: route, Signals: signals, Score: 100, Level: traffic.Normal.String()}
	if ss != nil {
		env.Degraded = ss.Degraded
		env.Weights = ss.Weights
	}
	if route == "" {
		// Service scope: the worst route speaks for the service.
		for j, r := range svc.Routes {
			if chain[j].value < env.Score {
				env.Score = chain[j].value
			}
			_, drill := s.Drills[r]
			env.Drill = env.Drill || drill
		}
		return env
	}
	_, env.Drill = s.Drills[route]
	env.Observe = p.Config.Failback.Observe.Seconds()
	if ss != nil {
		env.Weight = ss.Weights[route]
	}
	if rs == nil {
		return env
	}
	env.Score, env.Level, env.Stage = rs.Score.Value, rs.Level.String(), rs.Stage
	env.Missing = rs.Score.Missing
	if rs.Stage > 0 {
		env.StageFor = now.Sub(rs.StageSince).Seconds()
		if env.Observe > 0 {
			env.StageObserved = env.StageFor / env.Observe
		}
		// Only routes at a failback stage: few, and the check reads
		// their counted signals' bounds.
		env.OutOfReach = OutOfReach(p, *rs, now)
	}
	if m := rs.Move; m != nil {
		env.MovedBy, env.MovedTo, env.MovedAt = m.Lines(), m.To.String(), m.At.UTC().Format(time.RFC3339)
		env.Aborted = m.AbortText()
	}
	return env
}

// routeDetails adds a route's signals, causes, evidence and what it
// waits for to env, its
// alert environment from alertEnv: what costs most to build, and what few
// rules and only active alerts read (see targetEnv).
func routeDetails(p *Policy, env *rules.AlertEnv, rs *RouteState, now time.Time) {
	env.Causes = rs.Score.Causes()
	env.Waiting = WaitTexts(Waiting(p, *rs, now))
	for i := range rs.Score.Contributions {
		c := &rs.Score.Contributions[i]
		env.Signals[c.Signal] = envSignal(c)
		if hasEvidence(c) {
			env.Evidence = append(env.Evidence, c.Signal+": "+c.ReasonText())
		}
	}
}

// actuatorEnv is what an actuator-scope rule sees for one actuator; an
// actuator the snapshot says nothing about is taken as working.
func actuatorEnv(h ActuatorHealth, name string, signals map[string]float64, now time.Time) rules.AlertEnv {
	env := rules.AlertEnv{Actuator: name, Signals: signals, Score: 100, Level: traffic.Normal.String()}
	if !h.OK && !h.FailingSince.IsZero() {
		env.FailingFor = now.Sub(h.FailingSince).Seconds()
		env.Error = h.Error
	}
	return env
}

// envCopy is the copy of one target's environment that the target's
// alerts whose condition holds keep (Alert.Env), made once per target and
// tick: the environment's signals map serves every target in turn.
type envCopy struct{ env *rules.AlertEnv }

// of returns the copy of env, made at the first call.
func (c *envCopy) of(env *rules.AlertEnv) *rules.AlertEnv {
	if c.env == nil {
		e := *env
		e.Signals = maps.Clone(env.Signals)
		c.env = &e
	}
	return c.env
}

// appendFloat appends v as fmt's %.<prec><fmt> writes it: strconv
// writes the same for finite values, infinities (+Inf, -Inf) and NaN.
func appendFloat(b []byte, v float64, fmtc byte, prec int) []byte {
	return strconv.AppendFloat(b, v, fmtc, prec, 64)
}

// envSignal is what an alert environment's signals map holds for c.
func envSignal(c *Contribution) float64 {
	if c.Status != StatusOK {
		return math.NaN()
	}
	return c.AlertValue
}

// hasEvidence reports whether c gives a line of an alert environment's
// evidence (its signal and reason).
func hasEvidence(c *Contribution) bool {
	return c.Status == StatusOK && c.Counted && (c.format() != nil || c.Reason != "") &&
		(c.Penalty > 0 || c.CapsAt >= 0 || c.Floor > traffic.Normal || c.Unproven)
}
