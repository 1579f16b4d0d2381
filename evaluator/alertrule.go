package evaluator

import (
	"bytes"
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"
	"text/template"
	"time"

	"github.com/expr-lang/expr/vm"

	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/traffic"
)

// alertRule is a compiled alert rule of the policy.
type alertRule struct {
	cfg         rules.AlertRuleConfig
	prog        *vm.Program
	inputs      ruleInputs // what the condition reads (alertinputs.go)
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
//
// What a tick costs here grows with the routes times the rules, so the
// loop does per target only what its result needs: one expr VM and one
// signals map serve every evaluation (nothing keeps the environment), and
// an instance's previous state is looked up once per target, its key built
// only when it has a next state.
//
// routes are s's route states in p.Routes() order and splits its splits
// in p.Config.Services order; made says which of the route states (and of
// their memos) this tick made; a route state replaced to hold rule results
// is replaced in routes and recorded in writes. A route's previous alerts
// are found by its index, the other targets' by name.
func evalAlerts(p *Policy, prev map[string]*Alert, s State, routes []*RouteState, briefs []routeBrief, reuses []alertReuse, splits []*traffic.Split, replanned []bool, made []owned, writes *routeWrites, snap Snapshot, now time.Time) (map[string]*Alert, []Event) {
	next := make(map[string]*Alert, len(prev))
	type ordered struct {
		rule, target int
		ev           Event
	}
	type targetID struct{ service, route, actuator string }
	byTarget := make(map[targetID][]*Alert)
	var atRoutes []routeAlert
	for _, a := range prev {
		if i, ok := p.routeIndex[a.Route]; ok && a.Actuator == "" {
			atRoutes = append(atRoutes, routeAlert{int32(i), a})
			continue
		}
		t := targetID{a.Service, a.Route, a.Actuator}
		byTarget[t] = append(byTarget[t], a)
	}
	byRoute := groupByRoute(atRoutes, len(routes))
	var out []ordered
	var machine vm.VM
	signals := make(map[string]float64, len(p.Config.Signals))
	target := 0
	// One environment serves every target in turn (nothing keeps it), so a
	// target whose rules need none costs no allocation.
	var env rules.AlertEnv
	var built bool
	// eval evaluates the rules of one scope (scopeRules, indexes in
	// p.alerts) for one target. For a route in a
	// single service, rs and split are its state and the service's split:
	// the route's memo then gives the rule results while their environment
	// is unchanged (memo.go), and the environment is built only for a rule
	// whose alert moves. It returns rs, or a new state of the route whose
	// memo holds the results.
	serviceRules, routeRules, actuatorRules := p.scopeAlerts[rules.ScopeService], p.scopeAlerts[rules.ScopeRoute], p.scopeAlerts[rules.ScopeActuator]
	eval := func(scopeRules []int, id targetID, prevs []*Alert, rs *RouteState, ar alertReuse, replanned bool, own owned, split *traffic.Split, build func(signals map[string]float64) rules.AlertEnv) *RouteState {
		var cache annotationCache
		built = false
		envOf := func() *rules.AlertEnv {
			if !built {
				clear(signals)
				env, built = build(signals), true
			}
			return &env
		}
		memoized, failed := uint64(0), false
		var conds, reuse uint64
		same := false
		if rs != nil {
			conds, reuse, same = ar.conds, ar.reuse, ar.same
			if ar.set && replanned {
				conds, reuse, same = routeAlerts(p, rs, split)
			}
		}
		for _, ri := range scopeRules {
			r := p.alerts[ri]
			var cond bool
			if reuse&(1<<ri) != 0 {
				cond = conds&(1<<ri) != 0
			} else {
				res, err := machine.Run(r.prog, envOf())
				var isBool bool
				cond, isBool = res.(bool)
				if err == nil && !isBool {
					err = fmt.Errorf("the expression gave %T %v, not a boolean", res, res)
				}
				if err != nil {
					cond, failed = false, true
					out = append(out, ordered{ri, target, Event{Time: now, Type: EventAlertError, Name: r.cfg.Name,
						Service: env.Service, Route: env.Route, Reasons: []string{err.Error()}}})
				}
			}
			if cond {
				memoized |= 1 << ri
			}
			var was *Alert // the target's alert at the previous tick
			for _, a := range prevs {
				if a.Rule == r.cfg.Name && a.Service == id.service {
					was = a
				}
			}
			if !cond && was == nil {
				continue
			}
			a, ev := stepAlert(r, was, cond, envOf, same, &cache, now)
			if a != nil {
				next[AlertKey(r.cfg.Name, id.service, id.route, id.actuator)] = a
			}
			if ev != nil {
				out = append(out, ordered{ri, target, *ev})
			}
		}
		target++
		switch {
		case rs == nil:
		case failed:
			return forgetAlerts(rs, own)
		default:
			return rememberAlerts(p, rs, own, split, memoized, same)
		}
		return rs
	}
	var chain []routeBrief // a service's routes, in chain order
	for si, svc := range p.Config.Services {
		id := targetID{service: svc.Name}
		chain = chain[:0]
		for _, i := range p.serviceRoutes[si] {
			chain = append(chain, briefs[i])
		}
		eval(serviceRules, id, byTarget[id], nil, alertReuse{}, false, 0, nil,
			func(sig map[string]float64) rules.AlertEnv { return alertEnv(s, svc, splits[si], "", chain, nil, sig) })
		split := splits[si]
		for j, route := range svc.Routes {
			i := p.serviceRoutes[si][j]
			prevs := byRoute.of(i)
			// A drilled route's environment says drill, which the memo does
			// not record: its rules are evaluated afresh, and its memo
			// forgets the results it held (forgetAlerts).
			var rs *RouteState
			if _, drilled := s.Drills[route]; p.soleService[i] >= 0 && !drilled {
				rs = routes[i]
			} else if next := forgetAlerts(routes[i], made[i]); next != routes[i] {
				routes[i] = next
				writes.add(i)
			}
			if next := eval(routeRules, targetID{svc.Name, route, ""}, prevs, rs, reuses[i], replanned[si], made[i], split,
				func(sig map[string]float64) rules.AlertEnv {
					return alertEnv(s, svc, split, route, nil, routes[i], sig)
				}); next != rs {
				routes[i] = next
				writes.add(i)
			}
		}
	}
	for _, name := range p.actuators {
		id := targetID{actuator: name}
		eval(actuatorRules, id, byTarget[id], nil, alertReuse{}, false, 0, nil, func(sig map[string]float64) rules.AlertEnv {
			return actuatorEnv(snap.Actuators[name], name, sig, now)
		})
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
// env builds the target's environment when the alert needs it; unchanged
// says it is the one the previous tick saw, so an active alert keeps the
// annotations rendered from it.
func stepAlert(r *alertRule, prev *Alert, cond bool, envOf func() *rules.AlertEnv, unchanged bool, cache *annotationCache, now time.Time) (*Alert, *Event) {
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
			env := envOf()
			a = Alert{Rule: r.cfg.Name, Tier: r.cfg.Tier, Service: env.Service, Route: env.Route, Actuator: env.Actuator,
				State: StatePending, ActiveAt: now, LastTrue: now}
			unchanged = false
		}
		// Labels are fixed when the alert becomes active, so its identity
		// (fingerprint) in Alertmanager does not change while it fires.
		if a.Labels == nil {
			env := envOf()
			a.Labels = alertLabels(r.cfg, env.Service, env.Route, env.Level, env.Actuator, env.Drill)
		}
		if !unchanged || a.Annotations == nil {
			a.Annotations = renderAnnotations(r, *envOf(), cache)
		}
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

// alertEnv is what an alert rule sees for one service, or one of its
// routes when route is set; chain are the briefs of the service's routes
// in its order (by index, not by name: a fleet's routes map is large), rs the
// route's, ss the service's split. Its Signals are written into signals,
// an empty map.
func alertEnv(s State, svc rules.ServiceConfig, ss *traffic.Split, route string, chain []routeBrief, rs *RouteState, signals map[string]float64) rules.AlertEnv {
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
	if rs == nil {
		return env
	}
	env.Score, env.Level, env.Stage = rs.Score.Value, rs.Level.String(), rs.Stage
	env.Missing = rs.Score.Missing
	for i := range rs.Score.Contributions {
		c := &rs.Score.Contributions[i]
		env.Signals[c.Signal] = envSignal(c)
		if hasEvidence(c) {
			env.Evidence = append(env.Evidence, c.Signal+": "+c.ReasonText())
		}
	}
	return env
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

// annotationCache keeps what renderAnnotations computes once per target and
// tick for every rule of the target: the score breakdown.
type annotationCache struct {
	breakdown string
	built     bool
}

// renderAnnotations renders an alert's summary and description; a route's
// alert without a description gets the score breakdown, computed once per
// target and tick through cache.
func renderAnnotations(r *alertRule, env rules.AlertEnv, cache *annotationCache) map[string]string {
	data := env.TemplateData()
	ann := make(map[string]string, 3)
	var b bytes.Buffer
	for _, t := range [...]struct {
		name, src string
		tmpl      *template.Template
	}{{"summary", r.cfg.Summary, r.summary}, {"description", r.cfg.Description, r.description}} {
		name := t.name
		if strings.TrimSpace(t.src) == "" {
			continue // renders nothing
		}
		b.Reset()
		if err := t.tmpl.Execute(&b, data); err != nil {
			b.Reset()
			fmt.Fprintf(&b, "template error: %v", err)
		}
		if s := strings.TrimSpace(b.String()); s != "" {
			ann[name] = s
		}
	}
	if _, ok := ann["description"]; !ok && env.Route != "" {
		if !cache.built {
			cache.breakdown, cache.built = scoreBreakdown(env), true
		}
		ann["description"] = cache.breakdown
	}
	if r.cfg.RunbookURL != "" {
		ann["runbook_url"] = r.cfg.RunbookURL
	}
	return ann
}

// scoreBreakdown is the default description: score, level and signals.
// It is written with strconv rather than fmt (the same text: %.1f and %.3g
// of finite values) since a fleet renders it for every alerting route.
func scoreBreakdown(env rules.AlertEnv) string {
	names := make([]string, 0, len(env.Signals))
	for n := range env.Signals {
		names = append(names, n)
	}
	sort.Strings(names)
	b := make([]byte, 0, 64+24*len(names))
	b = append(b, "score "...)
	b = appendFloat(b, env.Score, 'f', 1)
	b = append(b, ", level "...)
	b = append(b, env.Level...)
	for _, n := range names {
		if v := env.Signals[n]; !math.IsNaN(v) {
			b = append(b, "; "...)
			b = append(b, n...)
			b = append(b, '=')
			b = appendFloat(b, v, 'g', 3)
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

// appendFloat appends v as fmt's %.<prec><fmt> writes it (%<fmt> for a
// prec of -1).
func appendFloat(b []byte, v float64, fmtc byte, prec int) []byte {
	if math.IsInf(v, 0) {
		if prec < 0 {
			return fmt.Appendf(b, "%"+string(fmtc), v)
		}
		return fmt.Appendf(b, "%.*"+string(fmtc), prec, v)
	}
	return strconv.AppendFloat(b, v, fmtc, prec, 64)
}

// routeAlert is an alert of the route of index i.
type routeAlert struct {
	i int32
	a *Alert
}

// alertsByRoute are alerts grouped by route index: route i's are
// alerts[from[i]:from[i+1]]. One index per route and no pointer: a slice
// of alerts per route was 24 bytes a route for the garbage collector to
// scan, at every tick with an alert anywhere in the fleet.
type alertsByRoute struct {
	from   []int32
	alerts []*Alert
}

// groupByRoute groups as by route index, of n routes.
func groupByRoute(as []routeAlert, n int) alertsByRoute {
	if len(as) == 0 {
		return alertsByRoute{}
	}
	slices.SortFunc(as, func(x, y routeAlert) int { return cmp.Compare(x.i, y.i) })
	g := alertsByRoute{from: make([]int32, n+1), alerts: make([]*Alert, len(as))}
	for k, ra := range as {
		g.from[ra.i+1]++
		g.alerts[k] = ra.a
	}
	for i := range n {
		g.from[i+1] += g.from[i]
	}
	return g
}

// of returns route i's alerts.
func (g alertsByRoute) of(i int) []*Alert {
	if g.from == nil {
		return nil
	}
	return g.alerts[g.from[i]:g.from[i+1]]
}
