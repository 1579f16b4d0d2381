package evaluator

import (
	"cmp"
	"maps"
	"slices"
	"strconv"

	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/traffic"
)

// shiftLimits is each service's max_shift_per_tick, by service index (0
// when none limits it): rules.ServiceConfig.MaxShiftPerTick, which the
// loader derives from the actuators that write the service.
func shiftLimits(cfg *rules.Policy) []int {
	out := make([]int, len(cfg.Services))
	for i, svc := range cfg.Services {
		out[i] = svc.MaxShiftPerTick
	}
	return out
}

// limitShift is the split planned for this tick when the service wants to
// go to want from the split planned last tick (from; nil when none), with
// at most maxShift points (max_shift_per_tick; 0 for none) moved off
// healthy routes per tick. The share moved from a split to another is half
// their L1 distance (the points some routes lose, which others gain).
// When want is more than maxShift points away, the plan is an intermediate
// split maxShift points closer, and the next tick, planning the same
// target, goes on from there: the state carries the split planned, so a
// limited move survives a reload, and after a restart it goes on from
// the split restored (Prometheus's saved series, or what the actuators
// hold).
//
// Moving traffic away from a failed route is never limited: a route whose
// level in want is failover or manual drops to its target weight at once,
// its traffic going to the routes that gain; only traffic leaving healthy
// routes counts against maxShift. An operator's pin is limited like any
// other move, unless the routes it drains are failed. A route want no
// longer has (a reload removed it from the service) drains at once too,
// and is left out of the split once empty.
//
// The intermediate split is deterministic: the moved points are shared in
// proportion to each route's remaining change, rounded by largest
// remainder (ties by route name), integers summing to 100. It carries
// want's flags, levels and reasons, plus a reason saying it is a step.
// Without a starting split (the first tick with nothing restored), or
// with one or a target not summing to 100, want is planned as is.
func limitShift(from *traffic.Split, want traffic.Split, maxShift int) traffic.Split {
	if maxShift <= 0 || maxShift >= 100 || from == nil || !isSplit(from.Weights) || !isSplit(want.Weights) {
		return want
	}
	next, moved, total := shiftStep(from.Weights, want.Weights, want.Levels, maxShift)
	if moved == total {
		return want
	}
	want.Weights = next
	want.Reasons = append(slices.Clip(want.Reasons),
		"rate limit: moving "+strconv.Itoa(moved)+" of "+strconv.Itoa(total)+" points toward the desired split this tick (max_shift_per_tick "+strconv.Itoa(maxShift)+")")
	return want
}

// isSplit reports whether w is a split a move can start from or go to:
// non-negative integers summing to 100.
func isSplit(w map[string]int) bool {
	sum := 0
	for _, v := range w {
		if v < 0 {
			return false
		}
		sum += v
	}
	return sum == 100
}

// shiftStep moves from toward to by at most maxShift points taken from
// healthy routes, plus whatever leaves failed routes (see limitShift). It
// returns the next split, the points it moves and the points the whole
// move takes.
func shiftStep(from, to map[string]int, levels map[string]traffic.Level, maxShift int) (next map[string]int, moved, total int) {
	var (
		drained int                // points leaving failed routes: not limited
		losses  = map[string]int{} // points leaving healthy routes
		gains   = map[string]int{}
		lost    int
	)
	routes := slices.Sorted(maps.Keys(from))
	for r := range to {
		if _, ok := from[r]; !ok {
			routes = append(routes, r)
		}
	}
	slices.Sort(routes)
	// gone reports a route the desired split no longer has (a reload
	// removed it): it may no longer take traffic, so it drains at once
	// like a failed route.
	gone := func(r string) bool { _, ok := to[r]; return !ok }
	for _, r := range routes {
		switch d := to[r] - from[r]; {
		case d < 0 && (levels[r].Failed() || gone(r)):
			drained -= d
		case d < 0:
			losses[r] = -d
			lost -= d
		case d > 0:
			gains[r] = d
		}
	}
	total = drained + lost
	if lost <= maxShift {
		return maps.Clone(to), total, total
	}
	next = make(map[string]int, len(routes))
	for _, r := range routes {
		next[r] = from[r]
		if to[r] < from[r] && (levels[r].Failed() || gone(r)) {
			next[r] = to[r]
		}
	}
	for r, n := range shareLargestRemainder(maxShift, losses) {
		next[r] -= n
	}
	for r, n := range shareLargestRemainder(drained+maxShift, gains) {
		next[r] += n
	}
	for r, w := range next {
		if _, ok := to[r]; !ok && w == 0 {
			delete(next, r) // a route the target no longer has, now empty
		}
	}
	return next, drained + maxShift, total
}

// shareLargestRemainder splits n points among keys in proportion to their
// caps, by largest remainder (ties by key). n must not exceed the sum of
// the caps; no key gets more than its cap.
func shareLargestRemainder(n int, caps map[string]int) map[string]int {
	sum := 0
	for _, c := range caps {
		sum += c
	}
	out := make(map[string]int, len(caps))
	if sum == 0 {
		return out
	}
	type rem struct {
		key string
		r   int
	}
	var rems []rem
	left := n
	for _, k := range slices.Sorted(maps.Keys(caps)) {
		out[k] = n * caps[k] / sum
		left -= out[k]
		rems = append(rems, rem{k, n * caps[k] % sum})
	}
	slices.SortStableFunc(rems, func(a, b rem) int { return cmp.Compare(b.r, a.r) })
	for i := 0; i < left; i++ {
		out[rems[i].key]++
	}
	return out
}
