package evaluator

import (
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hermes-failover/hermes/traffic"
)

// CommandKind names what an operator asks for.
type CommandKind string

// Operator commands.
const (
	// CommandRelease hands a route in manual back to automation.
	CommandRelease CommandKind = "release"
	// CommandPin sends all of a service's traffic to one route.
	CommandPin CommandKind = "pin"
	// CommandPause freezes a service's split.
	CommandPause CommandKind = "pause"
	// CommandClear removes a service's pin or pause.
	CommandClear CommandKind = "clear"
)

// Command is an operator's request. It reaches the core as part of a tick's
// Input and is applied at the start of that tick, before the routes are
// judged, so a tick never undoes it.
type Command struct {
	// ID identifies the request; the events it causes carry it.
	ID      string      `json:"id,omitempty"`
	Kind    CommandKind `json:"kind"`
	Service string      `json:"service,omitempty"` // pin, pause, clear
	Route   string      `json:"route,omitempty"`   // release, pin
	Reason  string      `json:"reason"`
	By      string      `json:"by,omitempty"`
	// Expires is when a pin or pause lapses by itself (zero means never),
	// or when a drill ends (required).
	Expires time.Time `json:"expires,omitzero"`
	// Signals are the values a drill sets on Route; DryRun keeps the
	// actuators out of it.
	Signals map[string]float64 `json:"signals,omitempty"`
	DryRun  bool               `json:"dry_run,omitempty"`
	// Replace lets a pause replace the service's pin, or a pin its pause
	// (and its expiry): without it Check refuses, so neither is lost by
	// accident. A pin over a pin, or a pause over a pause, replaces it.
	Replace bool `json:"replace,omitempty"`
}

// Check reports why cmd cannot be applied to s under p, or nil. Apply runs
// the same checks; callers use Check to refuse a request before queueing it.
func Check(p *Policy, s State, cmd Command) error {
	if cmd.Reason == "" {
		return errors.New("a reason is required")
	}
	switch cmd.Kind {
	case CommandRelease:
		rs, ok := s.Routes[cmd.Route]
		if !ok {
			return errors.New("release: unknown route " + strconv.Quote(cmd.Route) + "; the routes are " + quoteList(p.Routes()))
		}
		if rs.Level != traffic.Manual {
			return errors.New("release: route " + strconv.Quote(cmd.Route) + " is " + rs.Level.String() + ", not manual")
		}
	case CommandPin, CommandPause:
		svc, ok := p.services[cmd.Service]
		if !ok {
			return errors.New("unknown service " + strconv.Quote(cmd.Service) + "; the services are " + quoteList(p.serviceNames()))
		}
		if cmd.Kind == CommandPin && !slices.Contains(svc.Routes, cmd.Route) {
			return errors.New("route " + strconv.Quote(cmd.Route) + " is not in service " + strconv.Quote(cmd.Service) + "; its routes are " + quoteList(svc.Routes))
		}
		if o, ok := s.Overrides[cmd.Service]; ok && string(o.Kind) != string(cmd.Kind) && !cmd.Replace {
			// A pin over a pause, or a pause over a pin, would silently
			// drop the other and its expiry: as an operator's silence is
			// never lost to another's, it takes an explicit replace.
			until := "no expiry"
			if !o.Expires.IsZero() {
				until = "expires " + o.Expires.UTC().Format(time.RFC3339)
			}
			who := ""
			if o.By != "" {
				who = " by " + o.By
			}
			if o.Kind == traffic.Pin {
				return errors.New("service " + strconv.Quote(cmd.Service) + " is pinned to " + strconv.Quote(o.Route) + who + " (" + strconv.Quote(o.Reason) + ", " + until +
					"): a pause would replace the pin and its expiry; ask again with replace (hermes ctl pause --replace; \"replace\": true in the admin API), or clear the pin first")
			}
			return errors.New("service " + strconv.Quote(cmd.Service) + " is paused" + who + " (" + strconv.Quote(o.Reason) + ", " + until +
				"): a pin would replace the pause and its expiry; ask again with replace (hermes ctl pin --replace; \"replace\": true in the admin API), or clear the pause first")
		}
	case CommandClear:
		if _, ok := s.Overrides[cmd.Service]; !ok {
			return errors.New("service " + strconv.Quote(cmd.Service) + " has no override")
		}
	case CommandDrill, CommandEndDrill:
		if err := checkDrill(p, s, cmd); err != nil {
			return wrap(string(cmd.Kind), err)
		}
	default:
		return errors.New("unknown command " + strconv.Quote(string(cmd.Kind)) + " (want release, pin, pause, clear, drill or end-drill)")
	}
	return nil
}

// Apply carries out one operator command at now and returns the new state
// and what it changed; on error prev is returned unchanged.
//
// A release keeps the route failed over and lets its next failback start
// once its score allows, whatever the failback budget says (a person
// decided). A pin or pause takes effect in the plan of the same tick. A
// pause freezes the service's split as prev plans it; Step applies a
// tick's commands knowing which splits are unknown (Input.UnknownSplits),
// and a pause of one of those freezes nothing.
func Apply(p *Policy, prev State, cmd Command, now time.Time) (State, []Event, error) {
	return apply(p, prev, cmd, false, now)
}

// splitUnknownReason is the reason a pause of a service whose split is
// unknown adds to its event.
const splitUnknownReason = "the split is unknown (a restart could not learn what the backends hold): the pause freezes nothing and Hermes writes nothing for the service; the backends keep what they hold until it is pinned or cleared"

// apply is Apply; unknownSplit says that prev's split of cmd's service
// is a placeholder (Input.UnknownSplits). A pause then keeps no frozen
// split (Override.Frozen nil, saved so across restarts): the actuation
// stage holds the service and writes nothing, rather than write the
// placeholder (the first route at 100 %) while that route may be failing.
// A pin gives the whole split, and a release only moves a level: neither
// writes the placeholder.
func apply(p *Policy, prev State, cmd Command, unknownSplit bool, now time.Time) (State, []Event, error) {
	if err := Check(p, prev, cmd); err != nil {
		return prev, nil, err
	}
	s := prev.Clone()
	var evs []Event
	switch cmd.Kind {
	case CommandRelease:
		rs := s.Routes[cmd.Route]
		*rs = moveTo(p, *rs, traffic.Failover, now)
		rs.Released = true
		for _, svc := range p.Config.Services {
			if slices.Contains(svc.Routes, cmd.Route) {
				evs = append(evs, Event{Time: now, Type: EventLevel, Service: svc.Name, Route: cmd.Route,
					From: traffic.Manual.String(), To: traffic.Failover.String(), Score: ptr(rs.Score.Value),
					Reasons: []string{"released by a person: " + cmd.Reason + byText(cmd.By)}})
			}
		}
	case CommandPin, CommandPause:
		o := Override{Kind: traffic.OverrideKind(cmd.Kind), Route: cmd.Route, Reason: cmd.Reason, By: cmd.By, Since: now, Expires: cmd.Expires}
		reasons := []string{o.Reason}
		if o.Kind == traffic.Pause {
			if unknownSplit {
				reasons = append(reasons, splitUnknownReason)
			} else {
				o.Frozen = freeze(s.Services[cmd.Service])
			}
		}
		if s.Overrides == nil {
			s.Overrides = map[string]Override{}
		}
		s.Overrides[cmd.Service] = o
		evs = append(evs, Event{Time: now, Type: EventOverride, Service: cmd.Service, Route: o.Route, Name: string(o.Kind), State: "set",
			Reasons: reasons, By: o.By, Expires: timePtr(o.Expires)})
	case CommandClear:
		o := s.Overrides[cmd.Service]
		delete(s.Overrides, cmd.Service)
		evs = append(evs, Event{Time: now, Type: EventOverride, Service: cmd.Service, Route: o.Route, Name: string(o.Kind), State: "cleared",
			Reasons: []string{cmd.Reason + byText(cmd.By)}, By: cmd.By})
	case CommandDrill, CommandEndDrill:
		var err error
		if evs, err = applyDrill(p, &s, cmd, now); err != nil {
			return prev, nil, wrap(string(cmd.Kind), err)
		}
	}
	for i := range evs {
		evs[i].Command = cmd.ID
	}
	return s, evs, nil
}

// applyCommands applies a tick's commands in order; a command that cannot
// be applied (the configuration may have changed since it was queued)
// becomes a rejected command event. unknown are the services whose split
// is a placeholder (Input.UnknownSplits).
func applyCommands(p *Policy, s State, cmds []Command, unknown map[string]bool, now time.Time) (State, []Event) {
	var evs []Event
	for _, cmd := range cmds {
		next, cevs, err := apply(p, s, cmd, unknown[cmd.Service], now)
		if err != nil {
			evs = append(evs, Event{Time: now, Type: EventCommand, Service: cmd.Service, Route: cmd.Route, Name: string(cmd.Kind),
				State: "rejected", Reasons: []string{err.Error()}, By: cmd.By, Command: cmd.ID})
			continue
		}
		s = next
		evs = append(evs, cevs...)
	}
	return s, evs
}

func byText(by string) string {
	if by == "" {
		return ""
	}
	return " (by " + by + ")"
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func ptr[T any](v T) *T { return &v }

// quoteList is names quoted and joined with commas, for an error that
// lists the valid choices.
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

// serviceNames are p's services in configuration order.
func (p *Policy) serviceNames() []string {
	out := make([]string, len(p.Config.Services))
	for i, svc := range p.Config.Services {
		out[i] = svc.Name
	}
	return out
}
