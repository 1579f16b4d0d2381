// Package actuators defines how Hermes moves traffic: an Actuator makes one
// backend (nginx, DNS, feature flags, a webhook, a file) match the desired
// state. Actuators are level-triggered: the desired state is re-asserted
// every tick, and applying an unchanged state must be a no-op.
package actuators

import (
	"context"
	"maps"
)

// ServiceState is the desired (or current) state of one service.
type ServiceState struct {
	// Weights are integer percentages per route, summing to 100.
	Weights map[string]int `json:"weights"`
	// RetriesEnabled says whether the gateway may retry failed calls.
	RetriesEnabled bool `json:"retries_enabled"`
	// DegradedMode is set when every route of the service is bad.
	DegradedMode bool `json:"degraded_mode"`
	// Levels are the level of each route (normal, warm, shed, failover, manual).
	Levels map[string]string `json:"levels,omitempty"`
	// Reasons explain the split, for backends that can record them.
	Reasons []string `json:"reasons,omitempty"`
	// Override names an operator override shaping the split ("pin" or
	// "pause"): a person decided it, so Safety lets a pin send everything to
	// a route the evaluator considers failed.
	Override string `json:"override,omitempty"`
}

// Equal reports whether two states move traffic the same way (weights and
// flags; levels and reasons are informative).
func (s ServiceState) Equal(o ServiceState) bool {
	return maps.Equal(s.Weights, o.Weights) && s.RetriesEnabled == o.RetriesEnabled && s.DegradedMode == o.DegradedMode
}

// Desired is the state of every service an actuator handles.
type Desired map[string]ServiceState

// Actuator makes a backend match a desired state.
type Actuator interface {
	// Name identifies the actuator in logs, metrics and errors.
	Name() string
	// Apply makes the backend match desired for the services it handles.
	// It must be idempotent: applying an unchanged state changes nothing.
	Apply(ctx context.Context, desired Desired) error
	// Current reads what the backend holds now, for drift detection and for
	// restoring state after a restart. Services it knows nothing of are absent.
	Current(ctx context.Context) (Desired, error)
}
