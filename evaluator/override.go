package evaluator

import (
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/hermes-failover/hermes/traffic"
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
	// Frozen is the split a pause froze (weights and flags), saved with the
	// override so that a restart that learns nothing else keeps it rather
	// than planning the primary's 100 % afresh. Nil when the pause began
	// before any split was known; a pin needs none (its route says it).
	Frozen *traffic.Split `json:"frozen,omitempty"`
}

// Equal reports whether two overrides are the same hold.
func (o Override) Equal(p Override) bool {
	if (o.Frozen == nil) != (p.Frozen == nil) || o.Frozen != nil && !o.Frozen.Equal(*p.Frozen) {
		return false
	}
	o.Frozen, p.Frozen = nil, nil
	return o == p
}

// GivesSplit reports whether the override gives its service's split
// without the core's levels: a pin, or a pause that saved what it froze.
func (o Override) GivesSplit() bool {
	return o.Kind == traffic.Pin || o.Kind == traffic.Pause && o.Frozen != nil
}

// freeze is the part of a split a pause keeps: weights and flags.
func freeze(s *traffic.Split) *traffic.Split {
	if s == nil {
		return nil
	}
	return &traffic.Split{Weights: maps.Clone(s.Weights), RetriesEnabled: s.RetriesEnabled, Degraded: s.Degraded}
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
		if o.Frozen != nil {
			prev = o.Frozen
		}
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

// dropOverrides removes, in service order, the overrides that lapsed and
// those the configuration no longer allows (checked every tick, so a
// reload that removes a service, or a pinned route from its service,
// clears the override at the next tick), and returns their events.
func dropOverrides(p *Policy, ovs map[string]Override, now time.Time) []Event {
	var evs []Event
	for _, name := range slices.Sorted(maps.Keys(ovs)) {
		o := ovs[name]
		svc, known := p.services[name]
		ev := Event{Time: now, Type: EventOverride, Service: name, Route: o.Route, Name: string(o.Kind), By: o.By}
		switch {
		case !o.Active(now):
			ev.State, ev.Reasons = "expired", []string{o.Reason}
		case !known:
			ev.State, ev.Reasons = "cleared", []string{"service " + strconv.Quote(name) + " is no longer configured (was: " + o.Reason + ")"}
		case o.Kind == traffic.Pin && !slices.Contains(svc.Routes, o.Route):
			ev.State, ev.Reasons = "cleared", []string{"route " + strconv.Quote(o.Route) + " is no longer in service " + strconv.Quote(name) + " (routes " + listText(svc.Routes) + "); the pin (" + o.Reason + ") no longer applies"}
		default:
			continue
		}
		delete(ovs, name)
		evs = append(evs, ev)
	}
	return evs
}
