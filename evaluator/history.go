package evaluator

import (
	"maps"
	"time"
)

// TickRoute is one route at the end of one tick.
type TickRoute struct {
	Score float64 `json:"score"`
	Level string  `json:"level"`
	// Stage is the failback stage, 0 when none.
	Stage int `json:"stage,omitempty"`
}

// Tick is what one tick left: every route's score and level, and every
// service's traffic split (percent by route). Backtests print and draw
// them; the live loop keeps the last ones in a History.
type Tick struct {
	Time   time.Time                 `json:"time"`
	Routes map[string]TickRoute      `json:"routes"`
	Splits map[string]map[string]int `json:"splits"`
}

// TickOf reads the tick at t from the state Step returned for it.
func TickOf(t time.Time, s State) Tick {
	tk := Tick{Time: t.UTC(), Routes: make(map[string]TickRoute, len(s.Routes)), Splits: make(map[string]map[string]int, len(s.Services))}
	for name, rs := range s.Routes {
		tk.Routes[name] = TickRoute{Score: rs.Score.Value, Level: rs.Level.String(), Stage: rs.Stage}
	}
	for name, sp := range s.Services {
		tk.Splits[name] = maps.Clone(sp.Weights)
	}
	return tk
}

// History keeps the last ticks and events, up to a count of each; the
// oldest go first. It is not safe for concurrent use.
type History struct {
	ticks      []Tick
	events     []Event
	actuations []Actuation // see AddActuation
	maxTicks   int
	maxEvents  int
}

// NewHistory keeps up to maxTicks ticks and maxEvents events.
func NewHistory(maxTicks, maxEvents int) *History {
	return &History{maxTicks: maxTicks, maxEvents: maxEvents}
}

// Add records a tick and the events Step returned with it.
func (h *History) Add(t Tick, events []Event) {
	h.ticks = append(h.ticks, t)
	if n := len(h.ticks) - h.maxTicks; n > 0 {
		h.ticks = append(h.ticks[:0:0], h.ticks[n:]...)
	}
	h.events = append(h.events, events...)
	if n := len(h.events) - h.maxEvents; n > 0 {
		h.events = append(h.events[:0:0], h.events[n:]...)
	}
}

// Since returns copies of the ticks and events at or after t, oldest first.
func (h *History) Since(t time.Time) ([]Tick, []Event) {
	var ticks []Tick
	for _, tk := range h.ticks {
		if !tk.Time.Before(t) {
			ticks = append(ticks, tk)
		}
	}
	var events []Event
	for _, e := range h.events {
		if !e.Time.Before(t) {
			events = append(events, e)
		}
	}
	return ticks, events
}
