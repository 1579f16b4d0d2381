package evaluator

import (
	"maps"
	"slices"
	"time"
)

// RouteState is everything the core remembers about one route between ticks.
// Times are absolute, so dwell and cooldown survive restarts (see restore).
type RouteState struct {
	Level Level     `json:"level"`
	Since time.Time `json:"since"` // when Level began
	// Stage is the failback stage (1-based index into failback.stages) while
	// a failed-over route is being brought back; 0 when none.
	Stage      int       `json:"stage"`
	StageSince time.Time `json:"stage_since,omitzero"`
	// FailingSince is since when a failed-over route has been failing
	// without a break (for manual_after); zero while it looks recovered.
	FailingSince time.Time `json:"failing_since,omitzero"`
	// BelowSince[l] is since when the score has been continuously below level
	// l's threshold (or a floor has demanded l); zero when it is not.
	BelowSince [Manual]time.Time `json:"-"`
	// RecoverSince is since when the score has been continuously high enough
	// to leave the current level upward; zero when it is not.
	RecoverSince time.Time `json:"recover_since,omitzero"`
	// Failbacks are the completion times of failbacks within the window.
	Failbacks []time.Time `json:"failbacks,omitempty"`
	// Released: a person released the route from manual; its next failback
	// ignores the failback budget.
	Released bool `json:"released,omitempty"`
	// Score is the last score computed for the route.
	Score Score `json:"score"`
}

// ServiceState is a service's planned traffic.
type ServiceState struct {
	Weights        map[string]int `json:"weights"`
	Degraded       bool           `json:"degraded"`
	RetriesEnabled bool           `json:"retries_enabled"`
	// Override names the operator override shaping the split, if any.
	Override string `json:"override,omitempty"`
}

// State is the core's whole memory. The zero State means "nothing known":
// every route starts normal at the first tick.
type State struct {
	Routes   map[string]*RouteState   `json:"routes"`
	Services map[string]*ServiceState `json:"services"`
	Alerts   map[string]*AlertState   `json:"alerts,omitempty"`
	// Overrides are operators' holds on services, by service name.
	Overrides map[string]Override `json:"overrides,omitempty"`
}

// Clone returns a deep copy of s, so Step never mutates its input.
func (s State) Clone() State {
	out := State{Routes: map[string]*RouteState{}, Services: map[string]*ServiceState{}, Alerts: map[string]*AlertState{}}
	for k, v := range s.Routes {
		c := *v
		c.Failbacks = slices.Clone(v.Failbacks)
		out.Routes[k] = &c
	}
	for k, v := range s.Services {
		c := *v
		c.Weights = maps.Clone(v.Weights)
		out.Services[k] = &c
	}
	for k, v := range s.Alerts {
		c := *v
		out.Alerts[k] = &c
	}
	out.Overrides = maps.Clone(s.Overrides)
	return out
}
