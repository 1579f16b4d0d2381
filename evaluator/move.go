package evaluator

import (
	"strconv"
	"strings"
	"time"

	"github.com/hermes-failover/hermes/traffic"
)

// Move is the record of what moved a route down: the signals, their
// values and penalties, the level and the time, fixed at the move and kept
// until the route is back at normal. A later move down (warm, then
// failover) replaces it, keeping Incident; a move up keeps it. A page
// rendered from it names the cause the on-call person was paged for, not
// the contributions of the tick it is rendered at (by then a failed-over
// route's score shows only its probes). It is never written in place.
//
// It sits beside RouteState.Causes, which is not a record but the
// recovery scope: the signals seen at the move and at every tick since,
// with the largest failure share each showed (recovery.go).
type Move struct {
	// Incident is when the route left normal: the start of the incident
	// its alerts tell (the alerting stage keeps an alert's startsAt to it
	// when it fires again before the route is back at normal).
	Incident time.Time `json:"incident"`
	// At is the time of the move, To the level it moved to, Why the
	// transition's reason ("score 42.0 < 60 for 30s").
	At  time.Time     `json:"at"`
	To  traffic.Level `json:"to"`
	Why string        `json:"why"`
	// Signals are the signals that cost the score at the move, the
	// heaviest first (as Score.Causes orders them).
	Signals []MoveSignal `json:"signals,omitempty"`
	// Abort is the last failback of this incident that stepped back to no
	// traffic, until the next failback starts; nil when none.
	Abort *Abort `json:"abort,omitempty"`
	// QuietSince is when a failed-over route stopped serving users: the
	// first tick after its failover, or after its failback stepped back
	// to no traffic, at which it showed no call (quiet.go). Its stages
	// are judged on the calls since. Zero while unknown or serving.
	QuietSince time.Time `json:"quiet_since,omitzero"`
}

// MoveSignal is one signal that moved a route, as the score showed it at
// the move.
type MoveSignal struct {
	Signal  string  `json:"signal"`
	Value   float64 `json:"value"`
	Penalty float64 `json:"penalty,omitempty"`
	// Text is the signal's line as pages write it ("soft_fail_ratio 0.3
	// (-60.0): 72 of 240 calls in 1m: ≥ 21.6 % at 99.9 %").
	Text string `json:"text"`
}

// Abort is a failback given up: the stage it was at, when, and why.
type Abort struct {
	At    time.Time `json:"at"`
	Stage int       `json:"stage"`
	// Percent is the share of the service the stage carried.
	Percent int    `json:"percent"`
	Why     string `json:"why"`
}

// Lines are the signals' lines, the heaviest first.
func (m *Move) Lines() []string {
	if m == nil {
		return nil
	}
	out := make([]string, len(m.Signals))
	for i, s := range m.Signals {
		out[i] = s.Text
	}
	return out
}

// String is the record in one line: "failover at 2026-12-06T23:34:55Z
// (score 42.0 < 60 for 30s): soft_fail_ratio 0.3 (-60.0): …".
func (m *Move) String() string {
	if m == nil {
		return ""
	}
	s := m.To.String() + " at " + m.At.UTC().Format(time.RFC3339) + " (" + m.Why + ")"
	for i, l := range m.Lines() {
		if i == 0 {
			s += ": " + l
		} else {
			s += "; " + l
		}
	}
	return s
}

// AbortText is the last aborted failback in one line, "" when none:
// "stage 2 (30 %) at 2026-12-06T00:57:30Z: score 0.0 < 80 …".
func (m *Move) AbortText() string {
	if m == nil || m.Abort == nil {
		return ""
	}
	a := m.Abort
	return "stage " + strconv.Itoa(a.Stage) + " (" + strconv.Itoa(a.Percent) + " %) at " + a.At.UTC().Format(time.RFC3339) + ": " + a.Why
}

// moveRecord is the record of a move of a route from prev to level to at
// now for why, on score sc.
func moveRecord(prev *Move, to traffic.Level, why string, sc Score, now time.Time) *Move {
	m := &Move{Incident: now, At: now, To: to, Why: why}
	if prev != nil {
		m.Incident = prev.Incident
	}
	for _, c := range sc.causeContributions() {
		for _, line := range c.reasons() {
			m.Signals = append(m.Signals, MoveSignal{Signal: c.Signal, Value: c.Value, Penalty: c.Penalty, Text: line})
		}
	}
	return m
}

// withAbort is m with the failback at stage of p given up at now for why.
func withAbort(p *Policy, m *Move, stage int, why string, now time.Time) *Move {
	var out Move
	if m != nil {
		out = *m
	} else {
		// Restored without its record (an older state file): the abort
		// still tells.
		out = Move{Incident: now, At: now, To: traffic.Failover}
	}
	pct := 0
	if stage >= 1 && stage <= len(p.Config.Failback.Stages) {
		pct = p.Config.Failback.Stages[stage-1]
	}
	out.Abort = &Abort{At: now, Stage: stage, Percent: pct, Why: strings.TrimPrefix(why, "failback aborted: ")}
	// Back to no traffic: the route stops serving users again, and its
	// next failback is judged on the calls after that (quiet.go).
	out.QuietSince = time.Time{}
	return &out
}

// withoutAbort is m without its abort: a new failback started.
func withoutAbort(m *Move) *Move {
	if m == nil || m.Abort == nil {
		return m
	}
	out := *m
	out.Abort = nil
	return &out
}
