package evaluator

import (
	"maps"
	"slices"
	"time"

	"github.com/hermes-failover/hermes/traffic"
)

// Step is one tick of the core. From the previous state and the tick's
// input it applies the operator commands, computes every route's score,
// moves each route's level (dwell, hysteresis, cooldown, staged failback,
// manual), plans each service's traffic and evaluates the alert rules. It
// returns the next state and what changed, in a stable order. Step does no
// I/O and reads no clock.
func Step(p *Policy, prev State, in Input, now time.Time) (State, []Event) {
	// Step replaces what changes (route states, splits, the alerts map) and
	// changes nothing in place: the copy shares prev's.
	s := prev.clone(false)
	// routes are s's route states in p.Routes() order, looked up once; a
	// route state that changes is replaced there and recorded in writes.
	routes := make([]*RouteState, len(p.Routes()))
	var writes routeWrites
	if known := prev.order.routesOf(p, s.Routes); known != nil {
		copy(routes, known)
		checkOrder(p, s.Routes, routes)
	}
	for i, r := range p.Routes() {
		if routes[i] != nil {
			continue
		}
		if routes[i] = s.Routes[r]; routes[i] == nil {
			routes[i] = &RouteState{SavedRoute: SavedRoute{Level: traffic.Normal, Since: now}}
			writes.add(i)
		}
	}
	writes.flush(p, &s, routes)
	var evs []Event
	if len(in.Commands) > 0 {
		// An applied command works on its own copy of the state; a rejected
		// one leaves s sharing prev's routes map, so writes still copy it
		// before writing (a tick with commands is rare: the copy is cheap).
		s, evs = applyCommands(p, s, in.Commands, now)
		for i, r := range p.Routes() {
			routes[i] = s.Routes[r]
		}
	}
	if len(s.Drills) > 0 {
		// endDrill replaces, never changes in place, the route state of a
		// dry run it ends: routes are looked up again.
		evs = append(evs, endDrills(p, &s, now)...)
		for i, r := range p.Routes() {
			routes[i] = s.Routes[r]
		}
	}
	snap := overlayDrills(s.Drills, in.Snapshot)

	// splits are s's splits by service index, looked up once: a fleet's
	// services map is large. A split the plan replaces is replaced here too.
	splits := make([]*traffic.Split, len(p.Config.Services))
	for si, svc := range p.Config.Services {
		splits[si] = s.Services[svc.Name]
	}
	// Which routes get user traffic now decides which signals are idle.
	scratch := getScratch(len(routes), len(splits))
	defer scratch.release()
	share := scratch.share
	for si := range p.Config.Services {
		if st := splits[si]; st != nil {
			addShare(p, share, si, st.Weights)
		}
	}
	if len(s.Services) == 0 {
		for si, svc := range p.Config.Services {
			addShare(p, share, si, PlanService(p, svc, s.Routes).Weights)
		}
	}

	made := scratch.made // what of each route this tick made
	briefs, reuses := scratch.briefs, scratch.reuses
	// Each route's samples, and those of the last tick its memo was made
	// from, are read from the tables in place when they are laid out in
	// the policy's order (the live loop's and a backtest's are).
	inputs := newTickInputs(p, snap.t, s.inputs)
	for i, route := range p.Routes() {
		prevRS := *routes[i]
		idle := share[i] == 0
		sc, memo := inputs.score(prevRS.memo, i, idle)
		if memo != prevRS.memo {
			made[i] |= ownMemo
		}
		next, trs := decideRoute(p, prevRS, sc, idle, now)
		next.memo = memo
		if sc.Held() && len(prevRS.Score.Contributions) > 0 {
			// Missing data is not health: signals without data add no
			// penalty, so the computed score only looks better. Report (and
			// alert on) the last score seen with full data instead; the
			// decision above used only the data present.
			next.Score.Value = prevRS.Score.Value
			next.Score.Low = prevRS.Score.Low
			next.Score.Carried = true
		}
		if !sameRoute(&next, routes[i]) {
			// A new route state is allocated only here: with routes[i] =
			// &next, next escaped to the heap for every route every tick,
			// most of a calm tick's allocations.
			routes[i] = ptr(next)
			writes.add(i)
			made[i] |= ownState
		}
		briefs[i] = briefOf(&next)
		if si := p.soleService[i]; si >= 0 {
			reuses[i] = newAlertReuse(p, &next, splits[si])
		}
		for _, tr := range trs {
			evs = append(evs, transitionEvents(p, route, next, tr, now)...)
		}
	}

	writes.flush(p, &s, routes)
	s.inputs = snap.t
	if snap.t != nil {
		snap.t.kept.Store(true)
	}

	evs = append(evs, dropOverrides(p, s.Overrides, now)...)
	replanned := scratch.replanned // the plan replaced the split
	ownServices := false           // s.Services is this tick's copy
	var chain []routeBrief         // a service's routes, in chain order
	for si, svc := range p.Config.Services {
		chain = slices.Grow(chain[:0], len(svc.Routes))[:len(svc.Routes)]
		old := splits[si]
		for j, i := range p.serviceRoutes[si] {
			chain[j] = briefs[i]
		}
		st, same := planService(p, svc.Routes, chain, old)
		if o, ok := s.Overrides[svc.Name]; ok {
			st, same = applyOverride(o, st, old), false
		}
		if same && st.RetriesEnabled == old.RetriesEnabled && st.Degraded == old.Degraded && old.Override == st.Override {
			continue // the same split, found without comparing its maps
		}
		if old == nil || !old.Equal(st) || old.Override != st.Override {
			evs = append(evs, Event{Time: now, Type: EventTraffic, Service: svc.Name, Weights: maps.Clone(st.Weights),
				Degraded: ptr(st.Degraded), RetriesEnabled: ptr(st.RetriesEnabled)})
		} else if maps.Equal(old.Levels, st.Levels) && slices.Equal(old.Reasons, st.Reasons) {
			// The same split: keep the old one (splits are replaced, never
			// changed), so what compares it to the last tick's (the alert
			// memo) finds it by pointer.
			continue
		}
		splits[si], replanned[si] = ptr(st), true // allocated only for a split that changed
		if !ownServices {
			// s shares prev's map (clone): the first change copies it.
			shared := s.Services
			s.Services, ownServices = make(map[string]*traffic.Split, max(len(shared), len(p.Config.Services))), true
			maps.Copy(s.Services, shared)
		}
		s.Services[svc.Name] = splits[si]
	}

	alerts, aevs := evalAlerts(p, s.Alerts, s, routes, briefs, reuses, splits, replanned, made, &writes, snap, now)
	writes.flush(p, &s, routes)
	s.Alerts = alerts
	evs = append(evs, aevs...)
	evs = append(evs, recordDrills(&s, now)...)
	s.order = routeOrder{p: p, routes: routes, m: mapID(s.Routes), n: len(s.Routes)}
	return s, evs
}

// checkOrder, in tests, fails a tick whose route states by position are
// not those of routes by name.
var checkOrder = func(p *Policy, routes map[string]*RouteState, byPos []*RouteState) {}

// addShare adds the weights of the split of p.Config.Services[si] to each
// route's share, by route index. A split planned before a reload may still
// weigh a route its service no longer has: that one is found by name.
func addShare(p *Policy, share []int, si int, weights map[string]int) {
	found := 0
	for j, r := range p.Config.Services[si].Routes {
		if w, ok := weights[r]; ok {
			share[p.serviceRoutes[si][j]] += w
			found++
		}
	}
	if found == len(weights) {
		return
	}
	svc := p.Config.Services[si].Routes
	for r, w := range weights {
		if i, ok := p.routeIndex[r]; ok && !slices.Contains(svc, r) {
			share[i] += w
		}
	}
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
