package promapi

// routePositions are the configured routes of a tick by position and by
// name, built when the routes change (Collector) and read by every
// answer.
type routePositions struct {
	names []string
	index map[string]int
}

func newRoutePositions(routes []string) *routePositions {
	p := &routePositions{names: routes, index: make(map[string]int, len(routes))}
	for i, r := range routes {
		p.index[r] = i
	}
	return p
}

// routeFinder finds the position of each route one answer names.
// Prometheus writes a query's parts (rules.PartLabel: value, evidence,
// windows) one after another, each with the routes in the same order, so
// the route that follows a given route in one part mostly follows it in
// the next: find tries that guess, a string comparison, before the map,
// whose lookups at 10,000 routes are mostly cache misses (about a fifth
// of decoding an answer). A wrong guess costs one comparison; the map
// decides. TestRouteFinderAsMap holds it to the map's answers.
type routeFinder struct {
	*routePositions
	// after[i] is the position of the route that followed route i in this
	// answer, -1 when none did yet; nil until the first series.
	after []int32
	// prev is the position of the previous series' route, -1 at the start
	// or after a route that is not configured.
	prev int32
}

func newRouteFinder(p *routePositions) routeFinder {
	return routeFinder{routePositions: p, prev: -1}
}

// find is the position of route, false for a route not configured.
func find[S string | []byte](f *routeFinder, route S) (int, bool) {
	if f.after == nil {
		f.after = make([]int32, len(f.names))
		for i := range f.after {
			f.after[i] = -1
		}
	}
	if f.prev >= 0 {
		if g := f.after[f.prev]; g >= 0 && f.names[g] == string(route) {
			f.prev = g
			return int(g), true
		}
	}
	i, ok := f.index[string(route)]
	if !ok {
		f.prev = -1
		return 0, false
	}
	if f.prev >= 0 {
		f.after[f.prev] = int32(i)
	}
	f.prev = int32(i)
	return i, true
}
