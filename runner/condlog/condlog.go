// Package condlog logs conditions that last over ticks once each, not at
// every tick, and shortens fleet-wide lines to a count and a few names.
// It is shared by the loop and the stages; it keeps no state but the
// Log its owner holds.
package condlog

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"time"
)

// FewNames is how many example names a fleet-wide log line carries.
const FewNames = 3

// FirstFew returns up to FewNames of names, in their order: the examples
// of a log line that says a condition once for the fleet, with the count,
// rather than once per route or service.
func FirstFew(names []string) []string {
	return names[:min(len(names), FewNames)]
}

// ByReason groups the keys of m by their value, each group sorted.
func ByReason(m map[string]string) map[string][]string {
	out := map[string][]string{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out[m[k]] = append(out[m[k]], k)
	}
	return out
}

// RemindEvery is how often a condition that lasts is logged again: as
// Alertmanager's repeat_interval re-sends a firing alert now and then,
// not at every evaluation.
const RemindEvery = 10 * time.Minute

// Line is how a condition that holds at a tick is logged.
type Line struct {
	Level slog.Level
	Msg   string
	// Attrs describe the condition now: counts, the first few names, the
	// error.
	Attrs []any
	// Same is what tells this condition from a different one of the same
	// key (the failing signals and the error in words): a tick whose
	// Same differs from the last logged is logged as a change. Counts
	// are left out, so that a partial failure that moves from route to
	// route is not a line per tick, and so are an error's paths and
	// addresses (promapi.ErrorDetail: "not a directory", "connection
	// refused"), which may name a temporary file new at every try.
	Same string
	// End, when set, is the message of the line that says the condition
	// ended (default: "ended: " and Msg), and EndAttrs its attributes
	// (default: Attrs), before lasted and ticks.
	End      string
	EndAttrs []any
}

// openCond is a condition that holds: its last line and since when.
type openCond struct {
	line        Line
	since, told time.Time
	ticks       int
}

// Log logs conditions that last over ticks (a failing query, a
// backend that refuses writes) once each rather than at every tick: one
// line when a condition starts, one when it changes, one when it ends,
// and a reminder every RemindEvery while it lasts. Keys are grouped: a
// group is observed whole, and its keys that no longer hold end.
//
// Hand-rolled because slog has no notion of a lasting condition; it
// needs no lock, as only the goroutine of its owner (the loop, a stage's
// Tick) uses it.
type Log struct {
	log  *slog.Logger
	open map[string]map[string]*openCond // group → key → condition
}

// New logs on log.
func New(log *slog.Logger) *Log {
	return &Log{log: log, open: map[string]map[string]*openCond{}}
}

// Observe takes the conditions of group that hold at now, by key, and
// logs what started, changed or ended since the last observe of group,
// and a reminder of those last logged RemindEvery ago or more.
func (c *Log) Observe(now time.Time, group string, holding map[string]Line) {
	open := c.open[group]
	if open == nil {
		open = map[string]*openCond{}
		c.open[group] = open
	}
	for _, key := range slices.Sorted(maps.Keys(open)) {
		if _, ok := holding[key]; ok {
			continue
		}
		o := open[key]
		msg := o.line.End
		if msg == "" {
			msg = "ended: " + o.line.Msg
		}
		attrs := o.line.EndAttrs
		if attrs == nil {
			attrs = o.line.Attrs
		}
		c.log.Info(msg, append(slices.Clip(attrs), "lasted", now.Sub(o.since), "ticks", o.ticks)...)
		delete(open, key)
	}
	for _, key := range slices.Sorted(maps.Keys(holding)) {
		line := holding[key]
		o := open[key]
		switch {
		case o == nil:
			c.log.Log(context.Background(), line.Level, line.Msg, line.Attrs...)
			open[key] = &openCond{line: line, since: now, told: now, ticks: 1}
			continue
		case o.line.Same != line.Same:
			c.log.Log(context.Background(), line.Level, "changed: "+line.Msg, append(slices.Clip(line.Attrs), "since", o.since)...)
			o.told = now
		case now.Sub(o.told) >= RemindEvery:
			c.log.Log(context.Background(), line.Level, "still: "+line.Msg, append(slices.Clip(line.Attrs), "since", o.since, "ticks", o.ticks+1)...)
			o.told = now
		}
		o.line = line
		o.ticks++
	}
}

// Holds reports whether key of group held at the last observe.
func (c *Log) Holds(group, key string) bool {
	return c.open[group][key] != nil
}
