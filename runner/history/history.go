// Package history keeps the live loop's last ticks, events and actuations
// in memory: the status page's charts fall back to them when Prometheus
// cannot answer for Hermes's own series.
package history

import (
	"time"

	"github.com/hermes-failover/hermes/evaluator"
)

// DefaultRouteTicks bounds the ticks a Store keeps by their
// routes: 2,000,000 route-ticks (about 12 MB) hold 6 hours of 15 s ticks
// up to 1,388 routes, and 50 minutes at 10,000.
const DefaultRouteTicks = 2_000_000

// Store keeps the last ticks and events, up to a count of each and up to
// MaxRouteTicks routes summed over its ticks; the oldest go first. Ticks
// are held packed (packedTick), scores to a hundredth of a point. It is
// not safe for concurrent use.
type Store struct {
	ticks      []packedTick
	events     []evaluator.Event
	actuations []evaluator.Actuation // see AddActuation
	levels     []string              // level names, interned
	maxTicks   int
	maxEvents  int
	// MaxRouteTicks bounds the sum of the ticks' routes, so memory does not
	// grow with routes × maxTicks. Default DefaultRouteTicks.
	MaxRouteTicks int
	routeTicks    int
}

// New keeps up to maxTicks ticks and maxEvents events.
func New(maxTicks, maxEvents int) *Store {
	return &Store{maxTicks: maxTicks, maxEvents: maxEvents, MaxRouteTicks: DefaultRouteTicks}
}

// Add records a tick and the events Step returned with it.
func (h *Store) Add(t evaluator.Tick, events []evaluator.Event) {
	h.push(h.pack(t, layoutOf(t, h.lastLayout())), events)
}

// AddState records the tick at ts of s, the state Step returned for it,
// as Add(evaluator.TickOf(ts, s)) would, except that a service in splits
// is recorded with that split instead of its planned one; and the events
// Step returned with it. It packs the state as it is, without the
// evaluator.Tick's map of every route and copy of every split: at 10,000
// routes those were about 1.5 MB of garbage a tick, read once and
// dropped. TestAddStateAsAdd holds it to Add.
func (h *Store) AddState(ts time.Time, s evaluator.State, splits map[string]map[string]int, events []evaluator.Event) {
	weights := func(svc string) map[string]int {
		if w, ok := splits[svc]; ok {
			return w
		}
		return s.Services[svc].Weights
	}
	l := h.lastLayout()
	if !l.fitsState(s, weights) {
		l = layoutOfState(s, weights)
	}
	h.push(h.packState(ts.UTC(), s, weights, l), events)
}

// lastLayout is the newest tick's layout, nil when there is none.
func (h *Store) lastLayout() *tickLayout {
	if n := len(h.ticks); n > 0 {
		return h.ticks[n-1].layout
	}
	return nil
}

// push appends p and events, dropping the oldest beyond the bounds.
func (h *Store) push(p packedTick, events []evaluator.Event) {
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
func (h *Store) Since(t time.Time) ([]evaluator.Tick, []evaluator.Event) {
	var ticks []evaluator.Tick
	for _, tk := range h.ticks {
		if !tk.time.Before(t) {
			ticks = append(ticks, h.unpack(tk))
		}
	}
	var events []evaluator.Event
	for _, e := range h.events {
		if !e.Time.Before(t) {
			events = append(events, e)
		}
	}
	return ticks, events
}

// AddActuation records an actuation; the oldest go first, beyond the
// history's event count.
func (h *Store) AddActuation(a evaluator.Actuation) {
	h.actuations = append(h.actuations, a)
	if n := len(h.actuations) - h.maxEvents; n > 0 {
		h.actuations = append(h.actuations[:0:0], h.actuations[n:]...)
	}
}

// Actuations returns copies of the actuations at or after t, oldest first.
func (h *Store) Actuations(t time.Time) []evaluator.Actuation {
	var out []evaluator.Actuation
	for _, a := range h.actuations {
		if !a.Time.Before(t) {
			out = append(out, a)
		}
	}
	return out
}
