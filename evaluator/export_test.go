package evaluator

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ForgetMemos is s with every route's memo dropped, as a restored state.
func ForgetMemos(s State) State {
	s = s.Clone()
	for _, rs := range s.Routes {
		rs.memo = nil
	}
	return s
}

// ReusedMemos counts the routes of next that kept prev's memo with its
// alert results: their score and rule results were reused.
func ReusedMemos(prev, next State) int {
	n := 0
	for r, rs := range next.Routes {
		if old := prev.Routes[r]; old != nil && rs.memo != nil && rs.memo == old.memo && rs.memo.alerts.set {
			n++
		}
	}
	return n
}

// StateText is every field of s (JSON leaves some out: dwell clocks,
// alert values), every route without its memo.
func StateText(s State) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%+v", s.Overrides)
	for _, k := range slices.Sorted(maps.Keys(s.Services)) {
		fmt.Fprintf(&b, "\n%s %+v", k, *s.Services[k])
	}
	for _, r := range slices.Sorted(maps.Keys(s.Routes)) {
		rs := *s.Routes[r]
		rs.memo = nil
		fmt.Fprintf(&b, "\n%s %+v", r, rs)
	}
	for _, k := range slices.Sorted(maps.Keys(s.Alerts)) {
		fmt.Fprintf(&b, "\n%s %+v", k, *s.Alerts[k])
	}
	return b.String()
}

// SameRoute is sameRoute, for its test.
var SameRoute = sameRoute

// ReusableRules scores route from snap through its memo in prev, as the
// next Step would (not idle), and returns the route-scope rules whose
// results that memo gives for it, by name, and whether the route's whole
// alert environment is the one the memo holds.
func ReusableRules(p *Policy, prev State, snap Snapshot, route string) ([]string, bool) {
	rs := *prev.Routes[route]
	var memo *routeMemo
	rs.Score, memo = newTickInputs(p, snap.t, prev.inputs).score(rs.memo, p.routeIndex[route], false)
	rs.memo = memo
	_, reuse, same := routeAlerts(p, &rs, prev.Services[p.routeServices[route][0]])
	var names []string
	for i, r := range p.alerts {
		if r.cfg.Scope == "route" && reuse&(1<<i) != 0 {
			names = append(names, r.cfg.Name)
		}
	}
	return names, same
}

// Every test of the package checks that the route states Step reads by
// position are those of the state's Routes map by name.
func init() { checkOrder = verifyOrder }

func verifyOrder(p *Policy, routes map[string]*RouteState, byPos []*RouteState) {
	for i, r := range p.Routes() {
		if routes[r] != byPos[i] {
			panic(fmt.Sprintf("route %s at %d: the route state remembered by position is not the Routes map's", r, i))
		}
	}
}

// WithoutOrderCheck turns verifyOrder off until the returned func is
// called: benchmarks measure the tick without it.
func WithoutOrderCheck() func() {
	checkOrder = func(*Policy, map[string]*RouteState, []*RouteState) {}
	return func() { checkOrder = verifyOrder }
}
