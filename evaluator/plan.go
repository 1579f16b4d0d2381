package evaluator

import (
	"maps"
	"time"

	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/traffic"
)

// routeBrief is what a service's plan and its service-scope alert
// environment read of a route's state.
type routeBrief struct {
	value float64 // Score.Value
	level traffic.Level
	stage int
}

// briefOf is rs's brief; a missing route state is a normal route.
func briefOf(rs *RouteState) routeBrief {
	if rs == nil {
		return routeBrief{level: traffic.Normal}
	}
	return routeBrief{value: rs.Score.Value, level: rs.Level, stage: rs.Stage}
}

// failed reports whether a route must get no traffic by itself: failed over
// (and not in a failback stage) or manual.
func (b routeBrief) failed() bool {
	return b.level == traffic.Manual || (b.level == traffic.Failover && b.stage == 0)
}

// PlanService turns route levels into integer traffic percentages summing to
// 100 along the service's priority chain. Each route keeps its level's share
// of what reaches it and passes the rest down the chain to the next route
// that is not failed (cascade). The last route able to take traffic keeps
// all that reaches it. When every route is failed, the least bad one (highest
// score, earliest in the chain on ties) serves everything and the service is
// flagged degraded: draining all routes would serve nobody. In Step, the
// route already serving a degraded service keeps it until another beats
// its score by failover's recovery gap (recover_above − below).
//
// The split also names each route's level for the actuators, with a route
// being failed back as traffic.Failback: it carries traffic by design.
func PlanService(p *Policy, svc rules.ServiceConfig, routes map[string]*RouteState) traffic.Split {
	rss := make([]routeBrief, 0, len(svc.Routes))
	for _, name := range svc.Routes {
		rss = append(rss, briefOf(routes[name]))
	}
	return planService(p, svc.Routes, rss, nil)
}

// planServices plans every service's split from its routes' new states
// (routes, by route index), the override on it and the split it had (old
// splits of services no longer configured stay), then limits the move
// from the old split to max_shift_per_tick (shift.go): the split planned
// is the step the actuators write this tick. The step starts from the
// split the rate-limited backends took (applied, Input.Applied) when the
// loop gives one, else from the old split. A split whose weights,
// retries, degraded flag or override changed is an EventTraffic; a
// limited step's event gives the rate limit's reason.
func planServices(p *Policy, s State, routes []RouteState, applied map[string]traffic.Split, now time.Time) (map[string]*traffic.Split, []Event) {
	out := make(map[string]*traffic.Split, max(len(s.Services), len(p.Config.Services)))
	maps.Copy(out, s.Services)
	var evs []Event
	for si, svc := range p.Config.Services {
		old := s.Services[svc.Name]
		st := planService(p, svc.Routes, chainBriefs(p, si, routes), old)
		if o, ok := s.Overrides[svc.Name]; ok {
			st = applyOverride(o, st, old)
		}
		target := st.Weights
		from := old
		if a, ok := applied[svc.Name]; ok && old != nil {
			from = &a
		}
		st = limitShift(from, st, p.maxShift[si])
		if old == nil || !old.Equal(st) || old.Override != st.Override {
			ev := Event{Time: now, Type: EventTraffic, Service: svc.Name, Weights: maps.Clone(st.Weights),
				Degraded: ptr(st.Degraded), RetriesEnabled: ptr(st.RetriesEnabled)}
			if !maps.Equal(target, st.Weights) {
				ev.Reasons = []string{st.Reasons[len(st.Reasons)-1]}
			}
			evs = append(evs, ev)
		}
		out[svc.Name] = &st
	}
	return out, evs
}

// chainBriefs are the briefs of service si's routes, in chain order, from
// the route states by route index.
func chainBriefs(p *Policy, si int, routes []RouteState) []routeBrief {
	chain := make([]routeBrief, len(p.serviceRoutes[si]))
	for j, i := range p.serviceRoutes[si] {
		chain[j] = briefOf(&routes[i])
	}
	return chain
}

// planService is PlanService over the briefs rss of the chain's routes;
// old is the split the service had, if any (see the degraded hysteresis).
func planService(p *Policy, chain []string, rss []routeBrief, old *traffic.Split) (st traffic.Split) {
	keep := make([]int, len(chain))
	lvls := make([]traffic.Level, len(chain))
	okAfter := make([]bool, len(chain)+1) // okAfter[i]: some route after i is not failed
	for i := len(chain) - 1; i >= 0; i-- {
		okAfter[i] = okAfter[i+1] || !rss[i].failed()
	}
	remaining := 100
	for i, rs := range rss {
		switch {
		case remaining == 0:
			keep[i] = 0
		case !okAfter[i+1] && !rs.failed():
			keep[i] = remaining
		default:
			keep[i] = remaining * p.percentAt(rs.level, rs.stage) / 100
		}
		remaining -= keep[i]
	}
	if remaining > 0 {
		// Only reachable when every route is failed.
		best := 0
		for i := 1; i < len(chain); i++ {
			if rss[i].value > rss[best].value {
				best = i
			}
		}
		// Hysteresis: the route that served the degraded service last tick
		// keeps serving unless another beats its score by failover's
		// recovery gap. Failed routes' scores tie at 0 or swing with noise,
		// and re-picking every tick moved all traffic back and forth
		// (testdata/scenarios/all_routes_bad.yaml).
		if old != nil && old.Degraded {
			fo := p.level(traffic.Failover)
			for i, name := range chain {
				if old.Weights[name] == 100 && rss[best].value-rss[i].value < fo.RecoverAbove-fo.Below {
					best = i
				}
			}
		}
		keep[best] += remaining
		st.Degraded = true
	}
	for i, rs := range rss {
		lvls[i] = rs.level
		if rs.level == traffic.Failover && rs.stage > 0 {
			lvls[i] = traffic.Failback
		}
	}
	st.Weights = make(map[string]int, len(chain))
	st.Levels = make(map[string]traffic.Level, len(chain))
	for i, name := range chain {
		st.Weights[name] = keep[i]
		st.Levels[name] = lvls[i]
		if lvls[i] != traffic.Normal {
			st.Reasons = append(st.Reasons, name+": "+lvls[i].String())
		}
	}
	primary := rss[0]
	st.RetriesEnabled = !st.Degraded && (primary.level == traffic.Normal || p.level(min(primary.level, traffic.Failover)).Retries)
	return st
}
