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

// DefaultHistoryRouteTicks bounds the ticks a History keeps by their
// routes: 2,000,000 route-ticks (about 12 MB) hold 6 hours of 15 s ticks
// up to 1,388 routes, and 50 minutes at 10,000.
const DefaultHistoryRouteTicks = 2_000_000

// History keeps the last ticks and events, up to a count of each and up to
// MaxRouteTicks routes summed over its ticks; the oldest go first. Ticks
// are held packed (packedTick), scores to a hundredth of a point. It is
// not safe for concurrent use.
type History struct {
	ticks      []packedTick
	events     []Event
	actuations []Actuation // see AddActuation
	levels     []string    // level names, interned
	maxTicks   int
	maxEvents  int
	// MaxRouteTicks bounds the sum of the ticks' routes, so memory does not
	// grow with routes × maxTicks. Default DefaultHistoryRouteTicks.
	MaxRouteTicks int
	routeTicks    int
}

// NewHistory keeps up to maxTicks ticks and maxEvents events.
func NewHistory(maxTicks, maxEvents int) *History {
	return &History{maxTicks: maxTicks, maxEvents: maxEvents, MaxRouteTicks: DefaultHistoryRouteTicks}
}

// Add records a tick and the events Step returned with it.
func (h *History) Add(t Tick, events []Event) {
	var prev *tickLayout
	if n := len(h.ticks); n > 0 {
		prev = h.ticks[n-1].layout
	}
	p := h.pack(t, layoutOf(t, prev))
	h.ticks = append(h.ticks, p)
	h.routeTicks += len(p.scores)
	drop := 0 // the oldest ticks beyond either bound; the newest stays
	for len(h.ticks)-drop > 1 && (len(h.ticks)-drop > h.maxTicks || h.routeTicks > h.MaxRouteTicks) {
		h.routeTicks -= len(h.ticks[drop].scores)
		drop++
	}
	if drop > 0 {
		h.ticks = append(h.ticks[:0:0], h.ticks[drop:]...)
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
		if !tk.time.Before(t) {
			ticks = append(ticks, h.unpack(tk))
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
