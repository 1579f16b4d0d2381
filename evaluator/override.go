package evaluator

import (
	"maps"
	"time"

	"github.com/hermes-failover/hermes/evaluator/traffic"
)

// Override is an operator's hold on one service's traffic.
type Override struct {
	Kind   traffic.OverrideKind `json:"kind"`
	Route  string               `json:"route,omitempty"` // pin target
	Reason string               `json:"reason"`
	By     string               `json:"by,omitempty"`
	Since  time.Time            `json:"since"`
	// Expires is when the override lapses by itself; zero means never.
	Expires time.Time `json:"expires,omitzero"`
}

// Active reports whether the override is in force at now.
func (o Override) Active(now time.Time) bool {
	return o.Expires.IsZero() || now.Before(o.Expires)
}

// applyOverride changes a planned split according to an override. prev is
// the split in force before this tick (nil at the first tick).
func applyOverride(o Override, planned traffic.Split, prev *traffic.Split) traffic.Split {
	switch o.Kind {
	case traffic.Pin:
		w := make(map[string]int, len(planned.Weights))
		for r := range planned.Weights {
			w[r] = 0
		}
		w[o.Route] = 100
		planned.Weights = w
		planned.Degraded = false
	case traffic.Pause:
		if prev != nil {
			planned.Weights = maps.Clone(prev.Weights)
			planned.Degraded = prev.Degraded
			planned.RetriesEnabled = prev.RetriesEnabled
		}
	}
	planned.Override = o.Kind
	planned.Reasons = append(planned.Reasons, "override: "+string(o.Kind))
	return planned
}
