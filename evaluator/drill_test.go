package evaluator

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/cockroachdb/datadriven"
)

// drill runs the interaction commands drill and end-drill (see
// TestInteraction): keys other than route, for, reason and dry-run are the
// signals the drill sets.
func (h *harness) drill(d *datadriven.TestData) string {
	cmd := Command{Kind: CommandDrill, Reason: "test", Signals: map[string]float64{}}
	if d.Cmd == "end-drill" {
		cmd.Kind = CommandEndDrill
	}
	for _, a := range d.CmdArgs {
		val := ""
		if len(a.Vals) > 0 {
			val = a.Vals[0]
		}
		switch a.Key {
		case "route":
			cmd.Route = val
		case "reason":
			cmd.Reason = val
		case "by":
			cmd.By = val
		case "dry-run":
			cmd.DryRun = true
		case "for":
			dur, err := time.ParseDuration(val)
			if err != nil {
				return "error: for: " + err.Error()
			}
			cmd.Expires = h.now.Add(dur)
		default:
			v, err := strconv.ParseFloat(val, 64)
			if err != nil {
				return "error: " + a.Key + ": " + err.Error()
			}
			cmd.Signals[a.Key] = v
		}
	}
	next, evs, err := Apply(h.p, h.s, cmd, h.now)
	if err != nil {
		return "error: " + err.Error()
	}
	h.s = next
	var b strings.Builder
	for _, e := range evs {
		b.WriteString(h.format(e) + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// TestDrillTimesAreOrdered runs an error-ratio drill through Step and
// checks each phase is recorded once, in order, at or after injection.
func TestDrillTimesAreOrdered(t *testing.T) {
	p := policyWithActuator(t)
	start := time.Unix(0, 0).UTC()
	var s State
	now := start
	tick := func() []Event {
		now = now.Add(15 * time.Second)
		var evs []Event
		s, evs = Step(p, s, Input{Snapshot: snap(p, now, nil)}, now)
		return evs
	}
	tick()
	s2, evs, err := Apply(p, s, Command{Kind: CommandDrill, Route: "free", Reason: "game day", By: "alice",
		Signals: map[string]float64{"soft_fail_ratio": 0.5}, Expires: now.Add(10 * time.Minute)}, now)
	if err != nil {
		t.Fatal(err)
	}
	s = s2
	at := map[string]time.Time{}
	for i := 0; i < 60; i++ {
		for _, e := range append(evs, tick()...) {
			if e.Type != EventDrill {
				continue
			}
			if _, dup := at[e.State]; dup {
				t.Errorf("phase %s recorded twice", e.State)
			}
			at[e.State] = e.Time
			if e.Drill == nil || e.Drill.Kind != "soft_fail_ratio=0.5" || !e.Drill.Injected.Equal(at[DrillStarted]) {
				t.Errorf("%s event: drill info %+v", e.State, e.Drill)
			}
		}
		evs = nil
	}
	order := []string{DrillStarted, DrillDetected, DrillMoved, DrillFailedOver, DrillEnded}
	for i, ph := range order {
		if at[ph].IsZero() {
			t.Fatalf("phase %s not recorded (got %v)", ph, at)
		}
		if i > 0 && at[ph].Before(at[order[i-1]]) {
			t.Errorf("%s at %s before %s at %s", ph, at[ph], order[i-1], at[order[i-1]])
		}
	}
	if !at[DrillFailedOver].After(at[DrillStarted]) {
		t.Errorf("an error-ratio drill failed over at injection (%s): the dwell was skipped", at[DrillFailedOver])
	}
	if len(s.Drills) != 0 {
		t.Errorf("drill still running after it expired: %+v", s.Drills)
	}
}

// TestDrillOfARouteNotEvaluatedYet: a route a reload just added has no
// state until the next tick; a drill on it is refused, not applied to
// nothing.
func TestDrillOfARouteNotEvaluatedYet(t *testing.T) {
	p := policyWithActuator(t)
	now := time.Unix(0, 0).UTC()
	s, _ := Step(p, State{}, Input{Snapshot: snap(p, now, nil)}, now)
	delete(s.Routes, "paid-premium")
	cmd := Command{Kind: CommandDrill, Route: "paid-premium", Signals: map[string]float64{"quota_remaining": 0.01}, Reason: "x", Expires: now.Add(time.Minute)}
	if _, _, err := Apply(p, s, cmd, now); err == nil || !strings.Contains(err.Error(), "has not been evaluated yet") {
		t.Errorf("drill of a route without state: %v", err)
	}
}
