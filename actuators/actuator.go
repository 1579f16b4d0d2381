// Package actuators defines how Hermes moves traffic: an Actuator makes one
// backend (nginx, DNS, feature flags, a webhook, a file) match the desired
// state. Actuators are level-triggered: the desired state is re-asserted
// every tick, and applying an unchanged state must be a no-op.
package actuators

import (
	"context"

	"github.com/hermes-failover/hermes/traffic"
)

// Splits is the traffic split of every service an actuator handles, by
// service name: what the evaluator decided, or what a backend holds.
type Splits map[string]traffic.Split

// Actuator makes a backend match a desired state.
type Actuator interface {
	// Name identifies the actuator in logs, metrics and errors.
	Name() string
	// Apply makes the backend match desired for the services it handles.
	// It must be idempotent: applying an unchanged state changes nothing.
	Apply(ctx context.Context, desired Splits) error
	// Current reads what the backend holds now, for drift detection and for
	// restoring state after a restart. Services it knows nothing of are absent.
	Current(ctx context.Context) (Splits, error)
}

// Named implements Actuator's Name. Backends embed it, set to
// Settings.Name, rather than each keeping a name field.
type Named string

// Name is the actuator's name.
func (n Named) Name() string { return string(n) }
