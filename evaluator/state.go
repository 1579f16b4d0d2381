package evaluator

import (
	"maps"
	"slices"
	"time"

	"github.com/hermes-failover/hermes/evaluator/traffic"
)

// SavedRoute is the part of a route's state that survives a restart: Hermes
// exports it as its own series and restores it from them (package
// evaluator/persist), or infers it from the actuators. Times are absolute,
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
	Routes map[string]*RouteState `json:"routes"`
	// Services are the planned splits, the actuators' desired state.
	Services map[string]*traffic.Split `json:"services"`
	// Alerts are the pending, firing and recently resolved alerts, by AlertKey.
	Alerts map[string]*Alert `json:"alerts,omitempty"`
	// Overrides are operators' holds on services, by service name.
	Overrides map[string]Override `json:"overrides,omitempty"`
}

// Clone returns a deep copy of s, so Step never mutates its input.
func (s State) Clone() State { return s.clone(true) }

// clone copies s; with deep false the copy shares s's Alerts map and
// service splits, for a caller that builds new ones without mutating the
// old (Step: evalAlerts builds a new Alerts map, the plan replaces every
// split). The route states are copied into one backing array: one
// allocation per tick instead of one per route.
func (s State) clone(deep bool) State {
	out := State{Routes: make(map[string]*RouteState, len(s.Routes)), Services: make(map[string]*traffic.Split, len(s.Services)),
		Alerts: s.Alerts}
	routes := make([]RouteState, 0, len(s.Routes))
	for k, v := range s.Routes {
		routes = append(routes, *v)
		c := &routes[len(routes)-1]
		c.Failbacks = slices.Clone(v.Failbacks)
		out.Routes[k] = c
	}
	for k, v := range s.Services {
		if deep {
			c := v.Clone()
			v = &c
		}
		out.Services[k] = v
	}
	if deep {
		out.Alerts = make(map[string]*Alert, len(s.Alerts))
		for k, v := range s.Alerts {
			c := *v
			out.Alerts[k] = &c
		}
	}
	out.Overrides = maps.Clone(s.Overrides)
	return out
}
