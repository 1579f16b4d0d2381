package evaluator

import (
	"github.com/hermes-failover/hermes/evaluator/traffic"
	"github.com/hermes-failover/hermes/rules"
)

// failed reports whether a route must get no traffic by itself: failed over
// (and not in a failback stage) or manual.
func failed(rs RouteState) bool {
	return rs.Level == traffic.Manual || (rs.Level == traffic.Failover && rs.Stage == 0)
}

// PlanService turns route levels into integer traffic percentages summing to
// 100 along the service's priority chain. Each route keeps its level's share
// of what reaches it and passes the rest down the chain to the next route
// that is not failed (cascade). The last route able to take traffic keeps
// all that reaches it. When every route is failed, the least bad one (highest
// score, earliest in the chain on ties) serves everything and the service is
// flagged degraded: draining all routes would serve nobody.
//
// The split also names each route's level for the actuators, with a route
// being failed back as traffic.Failback: it carries traffic by design.
func PlanService(p *Policy, svc rules.ServiceConfig, routes map[string]*RouteState) traffic.Split {
	chain := svc.Routes
	st := traffic.Split{Weights: make(map[string]int, len(chain)), Levels: make(map[string]traffic.Level, len(chain))}
	// Each route's state is looked up once; a usual chain's lookups and
	// flags stay on the stack.
	var rsBuf [8]*RouteState
	var okBuf [9]bool
	rss, okAfter := rsBuf[:0], okBuf[:0] // okAfter[i]: some route after i is not failed
	if len(chain) > len(rsBuf) {
		rss, okAfter = make([]*RouteState, 0, len(chain)), make([]bool, 0, len(chain)+1)
	}
	for _, name := range chain {
		rss = append(rss, routes[name])
	}
	okAfter = okAfter[:len(chain)+1]
	okAfter[len(chain)] = false
	for i := len(chain) - 1; i >= 0; i-- {
		okAfter[i] = okAfter[i+1] || !failed(*rss[i])
	}
	remaining := 100
	for i, name := range chain {
		rs := rss[i]
		keep := 0
		switch {
		case remaining == 0:
		case !okAfter[i+1] && !failed(*rs):
			keep = remaining
		default:
			keep = remaining * p.primaryPercent(*rs) / 100
		}
		st.Weights[name] = keep
		remaining -= keep
	}
	if remaining > 0 {
		// Only reachable when every route is failed.
		best := 0
		for i := 1; i < len(chain); i++ {
			if rss[i].Score.Value > rss[best].Score.Value {
				best = i
			}
		}
		st.Weights[chain[best]] += remaining
		st.Degraded = true
	}
	for i, name := range chain {
		lvl := rss[i].Level
		if lvl == traffic.Failover && rss[i].Stage > 0 {
			lvl = traffic.Failback
		}
		st.Levels[name] = lvl
		if lvl != traffic.Normal {
			st.Reasons = append(st.Reasons, name+": "+lvl.String())
		}
	}
	primary := *rss[0]
	st.RetriesEnabled = !st.Degraded && (primary.Level == traffic.Normal || p.level(min(primary.Level, traffic.Failover)).Retries)
	return st
}
