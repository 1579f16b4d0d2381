package traffic

import (
	"errors"
	"maps"
	"slices"
	"strconv"
	"time"
)

// OverrideKind names an operator's hold on a service's traffic.
type OverrideKind string

// Override kinds.
const (
	// Pin sends all of a service's traffic to one route.
	Pin OverrideKind = "pin"
	// Pause freezes a service's split: levels are still computed and
	// reported, but traffic does not move.
	Pause OverrideKind = "pause"
)

// ParseOverrideKind checks an override kind's name.
func ParseOverrideKind(s string) (OverrideKind, error) {
	switch k := OverrideKind(s); k {
	case Pin, Pause:
		return k, nil
	}
	return "", errors.New("unknown override kind " + strconv.Quote(s) + " (want pin or pause)")
}

// Split is how one service's traffic is shared among its routes: what the
// evaluator plans and what an actuator is asked to hold (or reports holding).
type Split struct {
	// Weights are integer percentages per route, summing to 100.
	Weights map[string]int `json:"weights"`
	// RetriesEnabled says whether the gateway may retry failed calls.
	RetriesEnabled bool `json:"retries_enabled"`
	// Degraded is set when every route of the service is bad and the least
	// bad one serves everything.
	Degraded bool `json:"degraded_mode"`
	// Levels are each route's level; a route being failed back is Failback.
	Levels map[string]Level `json:"levels,omitempty"`
	// Reasons explain the split, for backends that can record them.
	Reasons []string `json:"reasons,omitempty"`
	// Override names the operator override shaping the split, if any: a
	// person decided it, so a pin may send everything to a failed route.
	Override OverrideKind `json:"override,omitempty"`
	// Writer says which replica wrote the split and at which tick, for
	// backends that two replicas write (see Stamp); zero when the runner
	// has no replica name. Informative, like Levels: Equal ignores it.
	Writer Stamp `json:"writer,omitzero"`
}

// Stamp names the replica that wrote a split to a backend and the tick it
// wrote it at. Read back from the backend, it is a lease: a replica does
// not overwrite a different split another replica holds, that is whose
// stamp it has seen change within the last four evaluation intervals of
// its own monotonic clock (runner/actuation's lease.go). The tick is never compared
// with another replica's clock.
type Stamp struct {
	// Replica is the writer's --replica name.
	Replica string `json:"replica"`
	// Tick is the aligned tick time of the write, renewed every tick;
	// after the writer's clock went back, one interval past its own
	// later stamp, so a replica's stamps only move forward.
	Tick time.Time `json:"tick"`
}

// IsZero reports whether no replica stamped the split.
func (s Stamp) IsZero() bool { return s.Replica == "" && s.Tick.IsZero() }

// Equal reports whether two stamps name the same replica and tick.
func (s Stamp) Equal(o Stamp) bool { return s.Replica == o.Replica && s.Tick.Equal(o.Tick) }

// Equal reports whether two splits move traffic the same way (weights and
// flags; levels, reasons and the override are informative).
func (s Split) Equal(o Split) bool {
	return maps.Equal(s.Weights, o.Weights) && s.RetriesEnabled == o.RetriesEnabled && s.Degraded == o.Degraded
}

// Clone returns a deep copy of s.
func (s Split) Clone() Split {
	s.Weights = maps.Clone(s.Weights)
	s.Levels = maps.Clone(s.Levels)
	s.Reasons = slices.Clone(s.Reasons)
	return s
}
