package evaluator

import (
	"maps"
	"slices"
	"time"

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
	// Causes are what moved the route down from normal: the signals
	// whose penalty, cap or floor the score showed at its move down and at
	// every tick since (recovery.go), in policy order; nil while normal. A route below normal without causes (restored after a
	// restart) has unknown ones (recovery.go). Never written in place.
	Causes []Cause `json:"causes,omitempty"`
	// Move is what moved the route down, fixed at its last move down and
	// kept until it is back at normal (move.go): what its pages and
	// status row name as the cause, where Causes (the recovery scope)
	// grow with every tick below normal. Saved in the local state file
	// (runner/persist), not in the series.
	Move *Move `json:"move,omitempty"`
	// Arrival is the last tick on which failures arriving in the newest
	// interval demanded a level (arrival.go); lost at a restart.
	Arrival Arrival `json:"-"`
	// Score is the last score computed for the route.
	Score Score `json:"score"`
}

// State is the core's whole memory. The zero State means "nothing known":
// every route starts normal at the first tick.
type State struct {
	// Routes are the route states by name.
	Routes map[string]*RouteState `json:"routes"`
	// Services are the planned splits, the actuators' desired state.
	Services map[string]*traffic.Split `json:"services"`
	// Alerts are the pending, firing and recently resolved alerts, by AlertKey.
	Alerts map[string]*Alert `json:"alerts,omitempty"`
	// Overrides are operators' holds on services, by service name.
	Overrides map[string]Override `json:"overrides,omitempty"`
	// Drills are the running fault drills, by route. A Drill is never
	// changed in place: the map is copied before a write.
	Drills map[string]Drill `json:"drills,omitempty"`
}

// Clone returns a deep copy of s. The route states are copied into one
// backing array: one allocation instead of one per route.
func (s State) Clone() State {
	out := s.next()
	out.Routes = make(map[string]*RouteState, len(s.Routes))
	routes := make([]RouteState, 0, len(s.Routes))
	for k, v := range s.Routes {
		routes = append(routes, *v)
		c := &routes[len(routes)-1]
		c.Failbacks = slices.Clone(v.Failbacks)
		out.Routes[k] = c
	}
	out.Services = make(map[string]*traffic.Split, len(s.Services))
	for k, v := range s.Services {
		c := v.Clone()
		out.Services[k] = &c
	}
	out.Alerts = make(map[string]*Alert, len(s.Alerts))
	for k, v := range s.Alerts {
		c := *v
		out.Alerts[k] = &c
	}
	return out
}

// next is the copy of s a tick starts from. It shares s's maps of route
// states, splits, alerts and drills, which a tick replaces and never
// writes (they may be the caller's), and copies the overrides, which
// dropOverrides writes.
func (s State) next() State {
	return State{Routes: s.Routes, Services: s.Services, Alerts: s.Alerts, Overrides: maps.Clone(s.Overrides), Drills: s.Drills}
}
