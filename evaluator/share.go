package evaluator

import "slices"

// trafficShare is each route's share of user traffic, by route index: the
// weights of every service's split summed (a route in two services can
// have up to 200). Before the first plan (a state without splits) it is
// what the plan of the routes' current levels gives. A route without a
// share is idle: its signals without traffic are not evidence.
func trafficShare(p *Policy, s State) []int {
	share := make([]int, len(p.Routes()))
	for si, svc := range p.Config.Services {
		if st := s.Services[svc.Name]; st != nil {
			addShare(p, share, si, st.Weights)
		}
	}
	if len(s.Services) == 0 {
		for si, svc := range p.Config.Services {
			addShare(p, share, si, PlanService(p, svc, s.Routes).Weights)
		}
	}
	return share
}

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
