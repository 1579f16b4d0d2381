package evaluator

import (
	"maps"
	"math"
	"reflect"
	"slices"
	"time"
	"unsafe"

	"github.com/hermes-failover/hermes/traffic"
)

// SavedRoute is the part of a route's state that survives a restart: Hermes
// exports it as its own series and restores it from them (package
// runner/persist), or infers it from the actuators. Times are absolute,
// so dwell and cooldown survive restarts.
type SavedRoute struct {
	Level traffic.Level `json:"level"`
	Since time.Time     `json:"since"` // when Level began
	// Stage is the failback stage (1-based index into failback.stages) while
	// a failed-over route is being brought back; 0 when none.
	Stage      int       `json:"stage"`
	StageSince time.Time `json:"stage_since,omitzero"`
	// FailingSince is since when a failed-over route has been failing
	// without a break (for manual_after); zero while it looks recovered.
	FailingSince time.Time `json:"failing_since,omitzero"`
	// Failbacks are the completion times of failbacks within the window.
	Failbacks []time.Time `json:"failbacks,omitempty"`
	// Released: a person released the route from manual; its next failback
	// ignores the failback budget.
	Released bool `json:"released,omitempty"`
}

// RouteState is everything the core remembers about one route between
// ticks: what is saved across restarts, and the timers and score that start
// again after one.
type RouteState struct {
	SavedRoute
	// BelowSince[l] is since when the score has been continuously below level
	// l's threshold (or a floor has demanded l); zero when it is not.
	BelowSince [traffic.Manual]time.Time `json:"-"`
	// RecoverSince is since when the score has been continuously high enough
	// to leave the current level upward; zero when it is not.
	RecoverSince time.Time `json:"recover_since,omitzero"`
	// Score is the last score computed for the route.
	Score Score `json:"score"`
	// memo is what the last tick computed from the route's inputs, for
	// the next to reuse when they are the same (memo.go).
	memo *routeMemo
}

// State is the core's whole memory. The zero State means "nothing known":
// every route starts normal at the first tick.
type State struct {
	// Routes are the route states by name. Step replaces the map when a
	// route state changes and never writes into one it did not make: the
	// states of consecutive ticks share it, and Step remembers its route
	// states by position for it (routeOrder). Write a copy, not in place.
	Routes map[string]*RouteState `json:"routes"`
	// Services are the planned splits, the actuators' desired state. Like
	// Routes, the map is shared by consecutive states and Step replaces it
	// when a split changes: write a copy, not in place.
	Services map[string]*traffic.Split `json:"services"`
	// Alerts are the pending, firing and recently resolved alerts, by AlertKey.
	Alerts map[string]*Alert `json:"alerts,omitempty"`
	// Overrides are operators' holds on services, by service name.
	Overrides map[string]Override `json:"overrides,omitempty"`
	// Drills are the running fault drills, by route. A Drill is never
	// changed in place: the map is copied before a write.
	Drills map[string]Drill `json:"drills,omitempty"`

	// inputs are the samples the last Step scored (after drills), which
	// every route state's memo was made from (memo.go); the next Step
	// compares its own with them. Never changed once a state holds them.
	inputs *table
	// order are the route states of Routes in a policy's order, as the
	// Step that made the state left them (routeOrder).
	order routeOrder
}

// routeOrder is a State's route states by position in p.Routes(), valid
// while the State's Routes is the same map, of the same size, as when
// Step recorded it: Step then reads its previous route states by position
// instead of looking 10,000 names up in the map, the part of a large
// fleet's tick that grew fastest with its size (the map and the states
// leave the CPU's caches between ticks). Step never writes into a Routes
// map it did not make this tick (states share it), and neither may anyone
// else: a map changed in place would not be seen here.
type routeOrder struct {
	p      *Policy
	routes []*RouteState
	m      unsafe.Pointer
	n      int
}

// routesOf returns the route states o holds for p and routes, nil when it
// holds none for them.
func (o routeOrder) routesOf(p *Policy, routes map[string]*RouteState) []*RouteState {
	if o.p != p || o.routes == nil || o.n != len(routes) || o.m != mapID(routes) {
		return nil
	}
	return o.routes
}

// mapID is the identity of a map.
func mapID(m map[string]*RouteState) unsafe.Pointer {
	return reflect.ValueOf(m).UnsafePointer()
}

// Clone returns a deep copy of s, so Step never mutates its input.
func (s State) Clone() State { return s.clone(true) }

// clone copies s; with deep false the copy shares s's route states (and
// their map), service splits (and their map) and Alerts map, for a caller
// that replaces them rather than changing them (Step: route states through
// routeWrites, the plan replaces a split that changes in a copy of the
// map, evalAlerts builds a new Alerts map). A deep copy copies the route
// states into one backing array: one allocation instead of one per route.
func (s State) clone(deep bool) State {
	out := State{Routes: s.Routes, Services: s.Services, Alerts: s.Alerts}
	if deep {
		out.Routes = make(map[string]*RouteState, len(s.Routes))
		routes := make([]RouteState, 0, len(s.Routes))
		for k, v := range s.Routes {
			routes = append(routes, *v)
			c := &routes[len(routes)-1]
			c.Failbacks = slices.Clone(v.Failbacks)
			out.Routes[k] = c
		}
	}
	if deep {
		out.Services = make(map[string]*traffic.Split, len(s.Services))
		for k, v := range s.Services {
			c := v.Clone()
			out.Services[k] = &c
		}
	}
	if deep {
		out.Alerts = make(map[string]*Alert, len(s.Alerts))
		for k, v := range s.Alerts {
			c := *v
			out.Alerts[k] = &c
		}
	}
	out.Overrides = maps.Clone(s.Overrides)
	out.Drills = s.Drills
	out.inputs = s.inputs
	if !deep {
		out.order = s.order
	}
	return out
}

// sameRoute reports whether a and b hold the same route state, so Step
// can keep the old one: slices compare by content (failbacks) or by
// backing array (a score's contributions and missing signals, which are
// never changed in place), floats bit for bit, times with == (equal
// instants with another location or monotonic reading only cost a copy).
// TestSameRouteSeesEveryField fails when RouteState gains a field.
func sameRoute(a, b *RouteState) bool {
	x, y := &a.SavedRoute, &b.SavedRoute
	if x.Level != y.Level || x.Since != y.Since || x.Stage != y.Stage || x.StageSince != y.StageSince ||
		x.FailingSince != y.FailingSince || !slices.Equal(x.Failbacks, y.Failbacks) || x.Released != y.Released {
		return false
	}
	if a.BelowSince != b.BelowSince || a.RecoverSince != b.RecoverSince || a.memo != b.memo {
		return false
	}
	p, q := &a.Score, &b.Score
	return math.Float64bits(p.Value) == math.Float64bits(q.Value) && math.Float64bits(p.Low) == math.Float64bits(q.Low) &&
		p.LowFloor == q.LowFloor && p.DecisiveLevel == q.DecisiveLevel && sameBacking(p.Contributions, q.Contributions) &&
		sameBacking(p.Missing, q.Missing) && p.Floor == q.Floor && p.ImmediateLevel == q.ImmediateLevel && p.Carried == q.Carried
}

// sameBacking reports whether a and b are the same slice: same length and
// backing array.
func sameBacking[T any](a, b []T) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}
