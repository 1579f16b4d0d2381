package evaluator

import (
	"fmt"
	"maps"
	"time"
)

// Override kinds.
const (
	// OverridePin sends all of a service's traffic to one route.
	OverridePin = "pin"
	// OverridePause freezes a service's split: levels are still computed and
	// reported, but traffic does not move.
	OverridePause = "pause"
)

// Override is an operator's hold on one service's traffic.
type Override struct {
	Kind   string    `json:"kind"`
	Route  string    `json:"route,omitempty"` // pin target
	Reason string    `json:"reason"`
	By     string    `json:"by,omitempty"`
	Since  time.Time `json:"since"`
	// Expires is when the override lapses by itself; zero means never.
	Expires time.Time `json:"expires,omitzero"`
}

// Active reports whether the override is in force at now.
func (o Override) Active(now time.Time) bool {
	return o.Expires.IsZero() || now.Before(o.Expires)
}

// ValidateOverride checks an override against the policy.
func ValidateOverride(p *Policy, service string, o Override) error {
	svc, ok := p.services[service]
	if !ok {
		return fmt.Errorf("unknown service %q", service)
	}
	if o.Reason == "" {
		return fmt.Errorf("a reason is required")
	}
	switch o.Kind {
	case OverridePause:
	case OverridePin:
		if !contains(svc.Routes, o.Route) {
			return fmt.Errorf("route %q is not in service %q (routes %v)", o.Route, service, svc.Routes)
		}
	default:
		return fmt.Errorf("unknown override kind %q (want pin or pause)", o.Kind)
	}
	return nil
}

// applyOverride changes a planned split according to an override. prev is
// the split in force before this tick (nil at the first tick).
func applyOverride(o Override, planned ServiceState, prev *ServiceState) ServiceState {
	switch o.Kind {
	case OverridePin:
		w := make(map[string]int, len(planned.Weights))
		for r := range planned.Weights {
			w[r] = 0
		}
		w[o.Route] = 100
		planned.Weights = w
		planned.Degraded = false
	case OverridePause:
		if prev != nil {
			planned.Weights = maps.Clone(prev.Weights)
			planned.Degraded = prev.Degraded
			planned.RetriesEnabled = prev.RetriesEnabled
		}
	}
	planned.Override = o.Kind
	return planned
}

// SetOverride puts an operator override on a service; it takes effect at the
// next Step. It returns the event to audit.
func SetOverride(p *Policy, prev State, service string, o Override) (State, Event, error) {
	if err := ValidateOverride(p, service, o); err != nil {
		return prev, Event{}, err
	}
	s := prev.Clone()
	if s.Overrides == nil {
		s.Overrides = map[string]Override{}
	}
	s.Overrides[service] = o
	return s, Event{Time: o.Since, Type: EventOverride, Service: service, Route: o.Route, Name: o.Kind, State: "set", Reasons: []string{o.Reason}}, nil
}

// ClearOverride removes a service's override; it is an error when none is set.
func ClearOverride(prev State, service, reason string, now time.Time) (State, Event, error) {
	o, ok := prev.Overrides[service]
	if !ok {
		return prev, Event{}, fmt.Errorf("service %q has no override", service)
	}
	s := prev.Clone()
	delete(s.Overrides, service)
	return s, Event{Time: now, Type: EventOverride, Service: service, Route: o.Route, Name: o.Kind, State: "cleared", Reasons: []string{reason}}, nil
}
