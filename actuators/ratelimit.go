package actuators

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/hermes-failover/hermes/traffic"
)

// RateLimit limits how much traffic one Apply moves. The share moved from a
// split to another is half their L1 distance (the points some routes lose,
// which others gain). When the desired split of a service is more than
// maxShift points away from the split last applied, RateLimit applies an
// intermediate split instead, maxShift points closer to the target, and the
// next tick (which re-asserts the same target) goes on from there.
//
// Moving traffic away from a failed route is never limited: a route whose
// Levels entry in the desired state is failover or manual drops to its
// target weight at once, its traffic going to the routes that gain; only
// traffic leaving healthy routes counts against maxShift. (Weights alone
// cannot tell a failed route from one shed on purpose, hence Levels.) A
// route the desired split no longer has (removed by a reload) drains at
// once too, and is left out of the split applied.
//
// The intermediate split is deterministic: the moved points are shared in
// proportion to each route's remaining change, rounded by largest
// remainder (ties by route name), integers summing to 100. It carries the
// desired flags, levels and reasons plus a reason saying it is a step.
//
// The starting point is the split RateLimit last applied with success, or,
// for a service it has not applied yet (the first tick after a start), the
// split Current reports (remembered if that Apply fails). With neither (Current fails, knows nothing of the
// service, or holds a split not summing to 100), the desired split is
// applied as is. maxShift of 0 or less, or of 100 or more, disables the
// limit: RateLimit returns a itself.
func RateLimit(a Actuator, maxShift int) Actuator {
	if maxShift <= 0 || maxShift >= 100 {
		return a
	}
	return &rateLimit{a: a, max: maxShift, last: map[string]map[string]int{}}
}

type rateLimit struct {
	a   Actuator
	max int

	mu   sync.Mutex // serialises Apply; guards last
	last map[string]map[string]int
}

func (r *rateLimit) Name() string     { return r.a.Name() }
func (r *rateLimit) Unwrap() Actuator { return r.a }

func (r *rateLimit) Current(ctx context.Context) (Splits, error) { return r.a.Current(ctx) }

func (r *rateLimit) Apply(ctx context.Context, desired Splits) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var current Splits
	out := make(Splits, len(desired))
	read := map[string]map[string]int{} // baselines read from Current
	for _, svc := range slices.Sorted(maps.Keys(desired)) {
		want := desired[svc]
		from, ok := r.last[svc]
		if !ok {
			if current == nil {
				current, _ = r.a.Current(ctx) // no baseline on error: see RateLimit
				if current == nil {
					current = Splits{}
				}
			}
			from = current[svc].Weights
			if isSplit(from) {
				read[svc] = from
			}
		}
		if !isSplit(from) || !isSplit(want.Weights) {
			out[svc] = want
			continue
		}
		next, moved, total := step(from, want.Weights, want.Levels, r.max)
		if moved == total {
			out[svc] = want
			continue
		}
		want.Weights = next
		want.Reasons = append(slices.Clip(want.Reasons), fmt.Sprintf(
			"rate limit: moving %d of %d points toward the desired split this tick (max_shift_per_tick %d)", moved, total, r.max))
		out[svc] = want
	}
	if err := r.a.Apply(ctx, out); err != nil {
		// Keep the baselines read: the next tick steps from the same place
		// even if the backend cannot be read then.
		maps.Copy(r.last, read)
		return err
	}
	clear(r.last)
	for svc, st := range out {
		r.last[svc] = maps.Clone(st.Weights)
	}
	return nil
}

// isSplit reports whether w is a split RateLimit can step from or to:
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

// step moves from toward to by at most maxShift points taken from healthy
// routes, plus whatever leaves failed routes (see RateLimit). It returns
// the next split, the points it moves and the points the whole move takes.
func step(from, to map[string]int, levels map[string]traffic.Level, maxShift int) (next map[string]int, moved, total int) {
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
	// like a failed route, and the backend is never asked for it again.
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
	for r, n := range share(maxShift, losses) {
		next[r] -= n
	}
	for r, n := range share(drained+maxShift, gains) {
		next[r] += n
	}
	for r, w := range next {
		if _, ok := to[r]; !ok && w == 0 {
			delete(next, r) // a route the target no longer has, now empty
		}
	}
	return next, drained + maxShift, total
}

// share splits n points among keys in proportion to their caps, by largest
// remainder (ties by key). n must not exceed the sum of the caps; no key
// gets more than its cap.
func share(n int, caps map[string]int) map[string]int {
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

// CarryRateLimits hands each RateLimit in next the baselines of the
// RateLimit of the same-named actuator in prev, so rebuilding the actuators
// (a reload) does not reset how far a limited move has gone: a backend that
// cannot report its split (a webhook) would otherwise get the whole move in
// one tick. Actuators without a RateLimit, or new ones, are left alone.
func CarryRateLimits(prev, next []Actuator) {
	old := map[string]*rateLimit{}
	for _, a := range prev {
		if rl := findRateLimit(a); rl != nil {
			old[a.Name()] = rl
		}
	}
	for _, a := range next {
		rl, from := findRateLimit(a), old[a.Name()]
		if rl == nil || from == nil || rl == from {
			continue
		}
		from.mu.Lock()
		last := make(map[string]map[string]int, len(from.last))
		for svc, w := range from.last {
			last[svc] = maps.Clone(w)
		}
		from.mu.Unlock()
		rl.mu.Lock()
		rl.last = last
		rl.mu.Unlock()
	}
}

// findRateLimit returns the RateLimit layer of a, or nil.
func findRateLimit(a Actuator) *rateLimit {
	rl, _ := layer[*rateLimit](a)
	return rl
}
