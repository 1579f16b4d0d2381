package evaluator

import (
	"maps"
	"time"

	"github.com/hermes-failover/hermes/traffic"
)

// Step is one tick of the core. From the previous state and the tick's
// input it applies the operator commands, ends the drills that are over,
// finds which routes get user traffic, scores and decides each route
// (dwell, hysteresis, cooldown, staged failback, manual), plans each
// service's traffic and evaluates the alert rules. It returns the next
// state and what changed, in a stable order. Step does no I/O, reads no
// clock and writes nothing it was given: it replaces what changes.
func Step(p *Policy, prev State, in Input, now time.Time) (State, []Event) {
	s := prev.next()
	s.Routes = withNewRoutes(p, s.Routes, now)
	s, evs := applyCommands(p, s, in.Commands, in.UnknownSplits, now)
	evs = append(evs, endDrills(p, &s, now)...)
	snap := overlayDrills(s.Drills, in.Snapshot)

	// Which routes get user traffic now decides which signals are idle.
	share := trafficShare(p, s)
	routes := make([]RouteState, len(p.Routes()))
	samples := newRouteSamples(p, snap)
	for i, route := range p.Routes() {
		last := s.Routes[route]
		idle := share[i] == 0
		next, trs := decideRoute(p, *last, samples.score(i, idle, scopeAt(last, now)), idle, now)
		routes[i] = withShownScore(withQuiet(p, next, idle, now), last)
		for _, tr := range trs {
			evs = append(evs, transitionEvents(p, route, routes[i], tr, now)...)
		}
	}
	s.Routes = routesByName(p, s.Routes, routes)

	evs = append(evs, dropOverrides(p, s.Overrides, now)...)
	services, tevs := planServices(p, s, routes, in.Applied, now)
	s.Services = services
	evs = append(evs, tevs...)

	alerts, aevs := evalAlerts(p, s, routes, snap, now)
	s.Alerts = alerts
	evs = append(evs, aevs...)
	evs = append(evs, recordDrills(&s, now)...)
	return s, evs
}

// withNewRoutes returns routes with a normal state, since now, for every
// route of p it lacks: routes itself when it lacks none.
func withNewRoutes(p *Policy, routes map[string]*RouteState, now time.Time) map[string]*RouteState {
	var out map[string]*RouteState
	for _, r := range p.Routes() {
		if routes[r] != nil {
			continue
		}
		if out == nil {
			out = make(map[string]*RouteState, max(len(routes), len(p.Routes())))
			maps.Copy(out, routes)
		}
		out[r] = &RouteState{SavedRoute: SavedRoute{Level: traffic.Normal, Since: now}}
	}
	if out == nil {
		return routes
	}
	return out
}

// withShownScore is next with the score to report and alert on: missing
// data is not health (signals without data add no penalty, so the
// computed score only looks better), so a route whose score was held
// shows the last score seen. The decision used only the data present.
// Carried says whether that score was computed with full data (the last
// tick had it, or carried such a score): a route never seen with full data
// shows a score that was never judged.
func withShownScore(next RouteState, last *RouteState) RouteState {
	if next.Score.Held() && len(last.Score.Contributions) > 0 {
		next.Score.Value = last.Score.Value
		next.Score.Low = last.Score.Low
		next.Score.Carried = !last.Score.Held() || last.Score.Carried
	}
	return next
}

// routesByName is the next state's route states: those of routes, by the
// policy's route names, and those of old for routes the policy no longer
// has (a reload keeps what it cannot judge).
func routesByName(p *Policy, old map[string]*RouteState, routes []RouteState) map[string]*RouteState {
	out := make(map[string]*RouteState, max(len(old), len(routes)))
	maps.Copy(out, old)
	for i, name := range p.Routes() {
		out[name] = &routes[i]
	}
	return out
}

func transitionEvents(p *Policy, route string, rs RouteState, tr transition, now time.Time) []Event {
	var evs []Event
	for _, svc := range p.routeServices[route] {
		ev := Event{Time: now, Service: svc, Route: route, Score: ptr(round1(rs.Score.Value)), Reasons: append([]string{tr.why}, rs.Score.Reasons()...)}
		if tr.from == tr.to {
			ev.Type = EventFailback
			ev.From, ev.To = tr.from.String(), tr.to.String()
			ev.Stage = ptr(tr.stageTo)
			ev.Percent = ptr(p.primaryPercent(rs))
		} else {
			ev.Type = EventLevel
			ev.From, ev.To = tr.from.String(), tr.to.String()
		}
		evs = append(evs, ev)
	}
	return evs
}

func round1(v float64) float64 {
	return float64(int64(v*10+0.5*sign(v))) / 10
}

func sign(v float64) float64 {
	if v < 0 {
		return -1
	}
	return 1
}
