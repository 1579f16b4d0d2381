package evaluator

import "maps"

// routeWrites are the route states a tick replaced, by index in
// p.Routes(). They reach the state's Routes map in flush, which first
// copies the map it shares with the previous tick's state: a tick in which
// no route state changed (a calm fleet's usual tick) shares the whole map
// instead of building a new one of every route.
type routeWrites struct {
	idx   []int
	owned bool // the map is this tick's own
}

// add records that routes[i] replaced the route's state.
func (w *routeWrites) add(i int) { w.idx = append(w.idx, i) }

// flush writes the recorded route states into s.Routes, copying it first
// if it is still the previous tick's.
func (w *routeWrites) flush(p *Policy, s *State, routes []*RouteState) {
	if len(w.idx) == 0 {
		return
	}
	if !w.owned {
		m := make(map[string]*RouteState, max(len(s.Routes), len(routes)))
		maps.Copy(m, s.Routes)
		s.Routes, w.owned = m, true
	}
	for _, i := range w.idx {
		s.Routes[p.routes[i]] = routes[i]
	}
	w.idx = w.idx[:0]
}
