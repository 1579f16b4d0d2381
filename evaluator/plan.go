package evaluator

import (
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/traffic"
)

// routeBrief is what a service's plan and its service-scope alert
// environment read of a route's state. Step gathers the briefs in the
// policy's order as it decides each route, while the route state is in the
// CPU's cache: at 10,000 routes the route states (6 cache lines each) no
// longer stay cached from one pass of a tick to the next, and reading them
// again in the plan and the alerts was a fifth of a tick's cache misses
// (cachegrind with a 4 MiB last level, README "Scale").
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
	var buf [8]routeBrief // a usual chain's briefs stay on the stack
	rss := buf[:0]
	for _, name := range svc.Routes {
		rss = append(rss, briefOf(routes[name]))
	}
	st, _ := planService(p, svc.Routes, rss, nil)
	return st
}

// planService is PlanService over the briefs rss of the chain's routes. A split
// whose weights, levels or reasons come out as those of old shares old's
// (splits are never changed in place), so a calm fleet's plan allocates
// nothing. same says all three are old's, so Step need not compare them
// again.
func planService(p *Policy, chain []string, rss []routeBrief, old *traffic.Split) (st traffic.Split, same bool) {
	const onStack = 8
	var keepBuf [onStack]int
	var lvlBuf [onStack]traffic.Level
	var okBuf [onStack + 1]bool
	keep, lvls, okAfter := keepBuf[:0], lvlBuf[:0], okBuf[:0] // okAfter[i]: some route after i is not failed
	if len(chain) > onStack {
		keep, lvls, okAfter = make([]int, 0, len(chain)), make([]traffic.Level, 0, len(chain)), make([]bool, 0, len(chain)+1)
	}
	keep, lvls, okAfter = keep[:len(chain)], lvls[:len(chain)], okAfter[:len(chain)+1]
	okAfter[len(chain)] = false
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
	degraded := 0 // routes not normal: one reason each
	for i, rs := range rss {
		lvls[i] = rs.level
		if rs.level == traffic.Failover && rs.stage > 0 {
			lvls[i] = traffic.Failback
		}
		if lvls[i] != traffic.Normal {
			degraded++
		}
	}

	same = old != nil
	if old != nil && sameEntries(old.Weights, chain, keep) {
		st.Weights = old.Weights
	} else {
		same = false
		st.Weights = make(map[string]int, len(chain))
		for i, name := range chain {
			st.Weights[name] = keep[i]
		}
	}
	if old != nil && sameEntries(old.Levels, chain, lvls) {
		st.Levels = old.Levels
	} else {
		same = false
		st.Levels = make(map[string]traffic.Level, len(chain))
		for i, name := range chain {
			st.Levels[name] = lvls[i]
		}
	}
	if old != nil && degraded > 0 && len(old.Reasons) == degraded && sameReasons(old.Reasons, chain, lvls) {
		st.Reasons = old.Reasons[:degraded:degraded] // an append must not write into old's
	} else {
		same = same && degraded == 0 && len(old.Reasons) == 0
		for i, name := range chain {
			if lvls[i] != traffic.Normal {
				st.Reasons = append(st.Reasons, name+": "+lvls[i].String())
			}
		}
	}
	primary := rss[0]
	st.RetriesEnabled = !st.Degraded && (primary.level == traffic.Normal || p.level(min(primary.level, traffic.Failover)).Retries)
	return st, same
}

// sameEntries reports whether m maps exactly chain[i] to vals[i].
func sameEntries[V comparable](m map[string]V, chain []string, vals []V) bool {
	if len(m) != len(chain) {
		return false
	}
	for i, name := range chain {
		if v, ok := m[name]; !ok || v != vals[i] {
			return false
		}
	}
	return true
}

// sameReasons reports whether reasons are, in order, "name: level" for
// each route of chain at a level other than normal.
func sameReasons(reasons []string, chain []string, lvls []traffic.Level) bool {
	k := 0
	for i, name := range chain {
		if lvls[i] == traffic.Normal {
			continue
		}
		r, lv := reasons[k], lvls[i].String()
		if len(r) != len(name)+2+len(lv) || r[:len(name)] != name || r[len(name):len(name)+2] != ": " || r[len(name)+2:] != lv {
			return false
		}
		k++
	}
	return true
}
