package evaluator

import (
	"errors"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hermes-failover/hermes/traffic"
)

// Drill commands.
const (
	// CommandDrill starts a fault drill on a route: Signals overlay its
	// snapshot until Expires.
	CommandDrill CommandKind = "drill"
	// CommandEndDrill stops a route's drill before it expires.
	CommandEndDrill CommandKind = "end-drill"
)

// Drill phases, the State of a drill event.
const (
	DrillStarted    = "started"     // the fault is injected (this tick is the injection time)
	DrillDetected   = "detected"    // first tick whose score or level shows the fault
	DrillMoved      = "moved"       // first split that gives the route less than before
	DrillFailedOver = "failed_over" // the route reached failover (or manual)
	DrillEnded      = "ended"       // expired, stopped or no longer applicable
)

// Drill is an operator's fault drill on one route: from Since until Until
// the route's signals read Signals (see Overlay) whatever Prometheus says,
// so levels, splits, alerts and (unless DryRun) actuators act as for a real
// fault. The core records when the fault was detected, first moved traffic
// and failed the route over, as drill events for the audit log.
//
// A drill always ends by itself at Until; it lives in the state and is kept
// across a restart with the operator overrides (the runner's overrides
// file), so a restart neither forgets a drill nor holds a route with one.
type Drill struct {
	Route   string             `json:"route"`
	Signals map[string]float64 `json:"signals"`
	Reason  string             `json:"reason"`
	By      string             `json:"by,omitempty"`
	Since   time.Time          `json:"since"`
	Until   time.Time          `json:"until"`
	// DryRun: the actuators keep Before for the route's services while the
	// drill runs, and the route's level goes back to Saved when it ends.
	DryRun bool `json:"dry_run,omitempty"`
	// Before are the splits of the route's services when the drill began:
	// a first move is measured against them, and a dry run holds them.
	Before map[string]traffic.Split `json:"before"`
	// Saved is the route's state when the drill began.
	Saved SavedRoute `json:"saved"`
	// The recorded times, zero until they happen.
	Detected   time.Time `json:"detected,omitzero"`
	Moved      time.Time `json:"moved,omitzero"`
	FailedOver time.Time `json:"failed_over,omitzero"`
}

// DrillInfo is what every drill event carries: which drill it belongs to
// (route and injection time) and what the drill is.
type DrillInfo struct {
	// Kind names the fault: the signals set, sorted, e.g.
	// "quota_remaining=0.02"; drills of one kind are compared.
	Kind     string             `json:"kind"`
	Signals  map[string]float64 `json:"signals"`
	Injected time.Time          `json:"injected"`
	Until    time.Time          `json:"until"`
	DryRun   bool               `json:"dry_run,omitempty"`
}

// DrillKind is the kind of a drill setting signals: "NAME=VALUE" pairs by
// name, joined with commas.
func DrillKind(signals map[string]float64) string {
	parts := make([]string, 0, len(signals))
	for _, n := range slices.Sorted(maps.Keys(signals)) {
		parts = append(parts, n+"="+strconv.FormatFloat(signals[n], 'g', -1, 64))
	}
	return strings.Join(parts, ",")
}

func (d Drill) info() *DrillInfo {
	return &DrillInfo{Kind: DrillKind(d.Signals), Signals: d.Signals, Injected: d.Since, Until: d.Until, DryRun: d.DryRun}
}

// DryRunHold is the split the actuators keep for service while a dry-run
// drill runs on one of its routes (the split when the drill began), and
// whether there is one. The core still plans the split the drill asks for.
func (s State) DryRunHold(service string) (traffic.Split, bool) {
	for _, route := range slices.Sorted(maps.Keys(s.Drills)) {
		d := s.Drills[route]
		if sp, ok := d.Before[service]; ok && d.DryRun {
			return sp, true
		}
	}
	return traffic.Split{}, false
}

// checkDrill reports why a drill command cannot be applied to s under p.
func checkDrill(p *Policy, s State, cmd Command) error {
	services, ok := p.routeServices[cmd.Route]
	if !ok {
		return errors.New("unknown route " + strconv.Quote(cmd.Route) + " (routes " + listText(p.Routes()) + ")")
	}
	d, running := s.Drills[cmd.Route]
	if cmd.Kind == CommandEndDrill {
		if !running {
			return errors.New("route " + strconv.Quote(cmd.Route) + " has no drill")
		}
		return nil
	}
	if running {
		return errors.New("route " + strconv.Quote(cmd.Route) + " is already in a drill (" + DrillKind(d.Signals) + " until " + d.Until.UTC().Format(time.RFC3339) + "); stop it first")
	}
	if len(cmd.Signals) == 0 {
		return errors.New("a drill sets at least one signal")
	}
	for _, n := range slices.Sorted(maps.Keys(cmd.Signals)) {
		if _, ok := p.signals[n]; !ok {
			return errors.New("unknown signal " + strconv.Quote(n) + " (signals " + listText(slices.Sorted(maps.Keys(p.signals))) + ")")
		}
		if v := cmd.Signals[n]; math.IsNaN(v) || math.IsInf(v, 0) {
			return errors.New("signal " + n + ": " + gText(v) + " is not a finite number")
		}
	}
	if cmd.Expires.IsZero() {
		return errors.New("a drill needs an end (expires): it must stop by itself")
	}
	for _, svc := range services {
		if s.Services[svc] == nil {
			return errors.New("service " + strconv.Quote(svc) + " has no split yet; drill after the first tick")
		}
	}
	if s.Routes[cmd.Route] == nil {
		return errors.New("route " + strconv.Quote(cmd.Route) + " has not been evaluated yet; drill after the next tick")
	}
	return nil
}

// applyDrill starts or stops a drill in s (a copy Apply owns) at now.
func applyDrill(p *Policy, s *State, cmd Command, now time.Time) ([]Event, error) {
	if cmd.Kind == CommandEndDrill {
		return endDrill(p, s, cmd.Route, "stopped: "+cmd.Reason+byText(cmd.By), now), nil
	}
	if !cmd.Expires.After(now) {
		return nil, errors.New("the drill would end at " + cmd.Expires.UTC().Format(time.RFC3339) + ", not after the tick of " + now.UTC().Format(time.RFC3339))
	}
	d := Drill{Route: cmd.Route, Signals: maps.Clone(cmd.Signals), Reason: cmd.Reason, By: cmd.By, Since: now, Until: cmd.Expires,
		DryRun: cmd.DryRun, Before: map[string]traffic.Split{}, Saved: s.Routes[cmd.Route].SavedRoute}
	d.Saved.Failbacks = slices.Clone(d.Saved.Failbacks)
	for _, svc := range p.routeServices[cmd.Route] {
		d.Before[svc] = s.Services[svc].Clone()
	}
	s.Drills = maps.Clone(s.Drills)
	if s.Drills == nil {
		s.Drills = map[string]Drill{}
	}
	s.Drills[cmd.Route] = d
	return []Event{drillEvent(d, DrillStarted, now, "drill: "+cmd.Reason+byText(cmd.By))}, nil
}

// endDrill removes route's drill from s; a dry run puts the route back
// where it was when the drill began, so no traffic moves after it.
func endDrill(p *Policy, s *State, route, why string, now time.Time) []Event {
	d := s.Drills[route]
	s.Drills = maps.Clone(s.Drills)
	delete(s.Drills, route)
	evs := []Event{drillEvent(d, DrillEnded, now, why)}
	if old := s.Routes[route]; d.DryRun && old != nil {
		from := old.Level
		// A new route state in a new map: Step shares the previous tick's.
		rs := &RouteState{SavedRoute: d.Saved, Score: old.Score}
		s.Routes = maps.Clone(s.Routes)
		s.Routes[route] = rs
		for _, svc := range p.routeServices[route] {
			if from != rs.Level {
				evs = append(evs, Event{Time: now, Type: EventLevel, Service: svc, Route: route, From: from.String(), To: rs.Level.String(),
					Reasons: []string{"dry-run drill ended: back to the level before the drill"}})
			}
		}
	}
	return evs
}

// endDrills ends, by route, the drills that expired at now and those whose
// route the configuration no longer has.
func endDrills(p *Policy, s *State, now time.Time) []Event {
	if len(s.Drills) == 0 {
		return nil // the common case costs nothing per tick
	}
	var evs []Event
	for _, route := range slices.Sorted(maps.Keys(s.Drills)) {
		switch d := s.Drills[route]; {
		case !now.Before(d.Until):
			evs = append(evs, endDrill(p, s, route, "expired", now)...)
		case p.routeServices[route] == nil || s.Routes[route] == nil:
			evs = append(evs, endDrill(p, s, route, "route "+strconv.Quote(route)+" is no longer configured", now)...)
		}
	}
	return evs
}

// overlayDrills returns snap with every drill's signals overlaid.
func overlayDrills(drills map[string]Drill, snap Snapshot) Snapshot {
	if len(drills) == 0 {
		return snap
	}
	snap = snap.Clone()
	for _, route := range slices.Sorted(maps.Keys(drills)) {
		d := drills[route]
		for _, n := range slices.Sorted(maps.Keys(d.Signals)) {
			// No window: endDrills already removed the drills that ended.
			Overlay{Route: route, Signal: n, Value: d.Signals[n]}.set(&snap)
		}
	}
	return snap
}

// recordDrills records, after a tick decided, the drills' first
// detection, first traffic move and failover, each once, as events.
func recordDrills(s *State, now time.Time) []Event {
	if len(s.Drills) == 0 {
		return nil
	}
	var evs []Event
	for _, route := range slices.Sorted(maps.Keys(s.Drills)) {
		d, rs := s.Drills[route], s.Routes[route]
		before := d
		if d.Detected.IsZero() && (rs.Level != d.Saved.Level || drillPenalized(d, rs.Score)) {
			d.Detected = now
			evs = append(evs, drillEvent(d, DrillDetected, now, "score "+fixed(rs.Score.Value, 1)+", level "+rs.Level.String()))
		}
		if d.Moved.IsZero() {
			for _, svc := range slices.Sorted(maps.Keys(d.Before)) {
				if sp := s.Services[svc]; sp != nil && sp.Weights[route] < d.Before[svc].Weights[route] {
					d.Moved = now
					ev := drillEvent(d, DrillMoved, now, svc+": "+route+" "+strconv.Itoa(d.Before[svc].Weights[route])+"% → "+strconv.Itoa(sp.Weights[route])+"%")
					ev.Service, ev.Weights = svc, maps.Clone(sp.Weights)
					evs = append(evs, ev)
					break
				}
			}
		}
		if d.FailedOver.IsZero() && rs.Level >= traffic.Failover {
			d.FailedOver = now
			evs = append(evs, drillEvent(d, DrillFailedOver, now, "level "+rs.Level.String()))
		}
		if d.Detected != before.Detected || d.Moved != before.Moved || d.FailedOver != before.FailedOver {
			s.Drills = maps.Clone(s.Drills)
			s.Drills[route] = d
		}
	}
	return evs
}

// drillPenalized reports whether a drilled signal counts against the
// route's score: a penalty, a cap, a floor or a value it cannot prove.
func drillPenalized(d Drill, sc Score) bool {
	for _, c := range sc.Contributions {
		if _, ok := d.Signals[c.Signal]; ok && (c.Penalty > 0 || c.CapsAt >= 0 || c.Floor > traffic.Normal || c.Unproven) {
			return true
		}
	}
	return false
}

func drillEvent(d Drill, phase string, now time.Time, why string) Event {
	return Event{Time: now, Type: EventDrill, Route: d.Route, Name: DrillKind(d.Signals), State: phase,
		Reasons: []string{why}, By: d.By, Expires: timePtr(d.Until), Drill: d.info()}
}
