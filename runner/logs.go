package runner

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"time"
)

// fewNames is how many example names a fleet-wide log line carries.
const fewNames = 3

// firstFew returns up to fewNames of names, in their order: the examples
// of a log line that says a condition once for the fleet, with the count,
// rather than once per route or service.
func firstFew(names []string) []string {
	return names[:min(len(names), fewNames)]
}

// byReason groups the keys of m by their value, each group sorted.
func byReason(m map[string]string) map[string][]string {
	out := map[string][]string{}
	for _, k := range slices.Sorted(maps.Keys(m)) {
		out[m[k]] = append(out[m[k]], k)
	}
	return out
}

// remindEvery is how often a condition that lasts is logged again: as
// Alertmanager's repeat_interval re-sends a firing alert now and then,
// not at every evaluation.
const remindEvery = 10 * time.Minute

// condLine is how a condition that holds at a tick is logged.
type condLine struct {
	level slog.Level
	msg   string
	// attrs describe the condition now: counts, the first few names, the
	// error.
	attrs []any
	// same is what tells this condition from a different one of the same
	// key (the failing signals and the error in words): a tick whose
	// same differs from the last logged is logged as a change. Counts
	// are left out, so that a partial failure that moves from route to
	// route is not a line per tick, and so are an error's paths and
	// addresses (promapi.ErrorDetail: "not a directory", "connection
	// refused"), which may name a temporary file new at every try.
	same string
	// end, when set, is the message of the line that says the condition
	// ended (default: "ended: " and msg), and endAttrs its attributes
	// (default: attrs), before lasted and ticks.
	end      string
	endAttrs []any
}

// openCond is a condition that holds: its last line and since when.
type openCond struct {
	line        condLine
	since, told time.Time
	ticks       int
}

// conditionLog logs conditions that last over ticks (a failing query, a
// backend that refuses writes) once each rather than at every tick: one
// line when a condition starts, one when it changes, one when it ends,
// and a reminder every remindEvery while it lasts. Keys are grouped: a
// group is observed whole, and its keys that no longer hold end.
//
// Hand-rolled because slog has no notion of a lasting condition; it
// needs no lock, as only the goroutine of its owner (the loop, a stage's
// Tick) uses it.
type conditionLog struct {
	log  *slog.Logger
	open map[string]map[string]*openCond // group → key → condition
}

func newConditionLog(log *slog.Logger) *conditionLog {
	return &conditionLog{log: log, open: map[string]map[string]*openCond{}}
}

// observe takes the conditions of group that hold at now, by key, and
// logs what started, changed or ended since the last observe of group,
// and a reminder of those last logged remindEvery ago or more.
func (c *conditionLog) observe(now time.Time, group string, holding map[string]condLine) {
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
		msg := o.line.end
		if msg == "" {
			msg = "ended: " + o.line.msg
		}
		attrs := o.line.endAttrs
		if attrs == nil {
			attrs = o.line.attrs
		}
		c.log.Info(msg, append(slices.Clip(attrs), "lasted", now.Sub(o.since), "ticks", o.ticks)...)
		delete(open, key)
	}
	for _, key := range slices.Sorted(maps.Keys(holding)) {
		line := holding[key]
		o := open[key]
		switch {
		case o == nil:
			c.log.Log(context.Background(), line.level, line.msg, line.attrs...)
			open[key] = &openCond{line: line, since: now, told: now, ticks: 1}
			continue
		case o.line.same != line.same:
			c.log.Log(context.Background(), line.level, "changed: "+line.msg, append(slices.Clip(line.attrs), "since", o.since)...)
			o.told = now
		case now.Sub(o.told) >= remindEvery:
			c.log.Log(context.Background(), line.level, "still: "+line.msg, append(slices.Clip(line.attrs), "since", o.since, "ticks", o.ticks+1)...)
			o.told = now
		}
		o.line = line
		o.ticks++
	}
}

// holds reports whether key of group held at the last observe.
func (c *conditionLog) holds(group, key string) bool {
	return c.open[group][key] != nil
}
