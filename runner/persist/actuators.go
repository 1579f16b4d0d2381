package persist

import (
	"fmt"
	"slices"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/traffic"
)

// FromActuators infers the state from the splits the actuators hold now
// (service → split, as actuators.FanOut's Current reports them), for when
// Prometheus has nothing to restore. It returns the state and a report line
// per route.
//
// A split shaped by an operator's pin or pause (a service in overrides)
// says nothing about the routes' health: its weights are not read for
// levels, but the service starts from that split, so that a paused service
// does not move at start-up. The
// primary (first route of a service's chain) is read from its own share:
// 100 is normal; the primary_percent of warm or shed is that level (levels
// win over failback stages when their percentages coincide); 0 is failover;
// a failback.stages percentage is failover at that stage. Any other share is
// the least severe level that keeps no more than it. A later route is
// normal, unless it holds 0 % while a route after it in the chain has
// traffic: then the chain skipped it, and it is failed over. A route in
// several services takes its most severe reading.
//
// Then the levels an actuator recorded (the file actuator keeps them) are
// taken for routes the splits could not tell about, and where the recorded
// level is more severe than the one read from the split: a manual route
// stays manual (no automatic failback); a route recorded in failback
// restarts failed over, at stage 0.
//
// Every Since is now, so dwell, cooldown, failback observation and
// manual_after all start again; no failback is assumed spent. Routes the
// actuators say nothing of are absent from State.Routes.
func FromActuators(p *evaluator.Policy, current map[string]traffic.Split, overrides map[string]evaluator.Override, now time.Time) (evaluator.State, []string) {
	s := evaluator.State{Routes: map[string]*evaluator.RouteState{}, Services: map[string]*traffic.Split{}}
	weights := map[string]map[string]int{}
	recorded := map[string]traffic.Level{}
	for _, svc := range p.Config.Services {
		sp, ok := current[svc.Name]
		if !ok {
			continue
		}
		for _, r := range svc.Routes {
			if lvl, ok := sp.Levels[r]; ok {
				if _, seen := recorded[r]; !seen {
					recorded[r] = lvl
				}
			}
		}
		switch _, held := overrides[svc.Name]; {
		case len(sp.Weights) == 0:
		case held:
			// The split stays as the actuators hold it: a paused service
			// must not move at start-up.
			kept := sp.Clone()
			s.Services[svc.Name] = &kept
		default:
			weights[svc.Name] = sp.Weights
		}
	}

	why := map[string]string{}
	for _, svc := range p.Config.Services {
		w, ok := weights[svc.Name]
		if !ok {
			continue
		}
		for i, r := range svc.Routes {
			var rs evaluator.SavedRoute
			var reason string
			if i == 0 {
				rs, reason = inferPrimary(p, w[r])
			} else {
				rs, reason = evaluator.SavedRoute{Level: traffic.Normal}, fmt.Sprintf("holds %d%%", w[r])
				if w[r] == 0 && slices.ContainsFunc(svc.Routes[i+1:], func(n string) bool { return w[n] > 0 }) {
					rs, reason = evaluator.SavedRoute{Level: traffic.Failover}, "holds 0% while a later route has traffic"
				}
			}
			reason = fmt.Sprintf("%s in %s", reason, svc.Name)
			if old := s.Routes[r]; old != nil && !moreSevere(p, rs, old.SavedRoute) {
				continue
			}
			s.Routes[r] = &evaluator.RouteState{SavedRoute: startedNow(rs, now)}
			why[r] = reason
		}
	}
	for _, r := range p.Routes() {
		lvl, ok := recorded[r]
		if lvl == traffic.Failback {
			lvl = traffic.Failover
		}
		if !ok || lvl > traffic.Manual {
			continue
		}
		if rs, known := s.Routes[r]; known && rs.Level >= lvl {
			continue
		}
		s.Routes[r] = &evaluator.RouteState{SavedRoute: startedNow(evaluator.SavedRoute{Level: lvl}, now)}
		why[r] = "as recorded by an actuator"
	}

	for _, svc := range p.Config.Services {
		w, ok := weights[svc.Name]
		if !ok {
			continue
		}
		st := evaluator.PlanService(p, svc, s.Routes)
		for _, r := range svc.Routes {
			st.Weights[r] = w[r]
		}
		s.Services[svc.Name] = &st
	}
	var report []string
	for _, r := range p.Routes() {
		rs, ok := s.Routes[r]
		if !ok {
			report = append(report, fmt.Sprintf("%s: no split known from the actuators; not restored", r))
			continue
		}
		line := fmt.Sprintf("%s: inferred %s", r, rs.Level)
		if rs.Stage > 0 {
			line += fmt.Sprintf(" at failback stage %d", rs.Stage)
		}
		report = append(report, fmt.Sprintf("%s from the actuators (%s), since now", line, why[r]))
	}
	return s, report
}

// startedNow starts rs's timers at now.
func startedNow(rs evaluator.SavedRoute, now time.Time) evaluator.SavedRoute {
	rs.Since = now
	if rs.Level == traffic.Failover {
		if rs.Stage > 0 {
			rs.StageSince = now
		} else {
			rs.FailingSince = now
		}
	}
	return rs
}

// inferPrimary reads a primary route's level from the share it holds.
func inferPrimary(p *evaluator.Policy, pct int) (evaluator.SavedRoute, string) {
	held := fmt.Sprintf("primary holds %d%%", pct)
	switch {
	case pct >= 100:
		return evaluator.SavedRoute{Level: traffic.Normal}, held
	case pct <= 0:
		return evaluator.SavedRoute{Level: traffic.Failover}, held
	}
	for _, l := range []traffic.Level{traffic.Warm, traffic.Shed} {
		if p.Level(l).PrimaryPercent == pct {
			return evaluator.SavedRoute{Level: l}, held
		}
	}
	if i := slices.Index(p.Config.Failback.Stages, pct); i >= 0 {
		return evaluator.SavedRoute{Level: traffic.Failover, Stage: i + 1}, held
	}
	for _, l := range []traffic.Level{traffic.Warm, traffic.Shed, traffic.Failover} {
		if p.Level(l).PrimaryPercent <= pct {
			return evaluator.SavedRoute{Level: l}, held + ", not a configured share"
		}
	}
	return evaluator.SavedRoute{Level: traffic.Failover}, held + ", not a configured share"
}

// moreSevere reports whether a sends less traffic to its route than b (on
// a tie, whether its level is higher).
func moreSevere(p *evaluator.Policy, a, b evaluator.SavedRoute) bool {
	pa, pb := p.PrimaryPercent(a), p.PrimaryPercent(b)
	if pa != pb {
		return pa < pb
	}
	return a.Level > b.Level
}
