package evaluator

import (
	"math"
	"slices"
	"time"
)

// Evidence still wanted. A route held below recover_above, or a failback
// stage not yet shown good, waits for calls (recovery.go): the end of a counted
// signal's interval farthest from health is past its threshold until
// enough calls show it within. callsWanted says how many, and at the
// rate the window's calls come in, how long that takes, so a person reads
// "hard_fail_ratio: 420 of about 950 calls needed in 15m …" instead of a
// time already past.

// callsNeeded is the fewest calls in which x failures show a failure
// share at most t at the confidence of b (its upper bound ≤ t), no more
// failing; +Inf when none do (t ≤ 0). The bound falls as calls grow with
// x fixed, so a binary search over the count finds it.
func callsNeeded(x, t float64, b *proportionBounds) float64 {
	if t <= 0 {
		return math.Inf(1)
	}
	within := func(n float64) bool { _, hi := b.of(x/n, n); return hi <= t }
	lo, hi := math.Max(1, x), math.Max(1, x)
	for !within(hi) {
		lo, hi = hi, hi*2
		if hi > 1e12 {
			return math.Inf(1)
		}
	}
	for hi-lo > 1 {
		mid := math.Floor((lo + hi) / 2)
		if within(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// callsWanted is, for each counted signal of route state rs whose
// evidence must rule out the failure that moved the route and does not
// yet (recovery.go), what its window's calls need to show: how many calls
// in all (none more failing), and at the rate they arrive, how long until
// the window holds them, or that it never holds so many at this rate:
// Waiting's WaitCalls lines.
func callsWanted(p *Policy, rs RouteState) []Wait {
	var out []Wait
	for _, w := range evidenceWanted(p, rs) {
		out = append(out, Wait{WaitCalls, w.text})
	}
	return out
}

// OutOfReach reports whether a counted signal of route state rs, at a
// failback stage at now, needs more calls to rule out the failure that
// moved the route than its window holds at the rate they arrive, or than
// any count of calls shows: at this traffic, the evidence the stage waits
// for cannot arrive (HermesFailbackStalled fires on it once the stage's
// observe window has passed; callsWanted says it in words). Only a window
// that began after the stage did counts: one that still holds the time
// before it, with no traffic, would understate the rate.
func OutOfReach(p *Policy, rs RouteState, now time.Time) bool {
	if rs.Stage == 0 {
		return false
	}
	at := now.Sub(rs.StageSince)
	return slices.ContainsFunc(evidenceWanted(p, rs), func(w wanted) bool { return w.outOfReach && w.window <= at })
}

// wanted is one signal's evidence still wanted: its line, its window, and
// whether the window cannot hold the calls at their rate.
type wanted struct {
	text       string
	window     time.Duration
	outOfReach bool
}

// evidenceWanted is callsWanted, with each line's verdict.
func evidenceWanted(p *Policy, rs RouteState) []wanted {
	var out []wanted
	sc, scope := rs.Score, scopeOf(&rs)
	idle := slices.ContainsFunc(sc.Contributions, func(c Contribution) bool { return c.Idle })
	for i := range sc.Contributions {
		c := &sc.Contributions[i]
		idx, ok := p.signalIndex[c.Signal]
		if !ok || c.Status != StatusOK || !c.Counted || c.format() == nil || c.format().samples || len(p.scoring.bounds[idx]) == 0 {
			continue
		}
		b := p.scoring.bounds[idx][0]
		v, n, w := c.Value, c.Volume, p.Config.Signals[idx].Derived.Own
		if win, wv, wn := c.Window(); win > 0 {
			v, n, w = wv, wn, win
		}
		strict, share := scope.rules(&p.Config.Signals[idx], idle)
		if !strict || !(n > 0) || w <= 0 {
			continue
		}
		// x failures; t the failure share to show it below: the one that
		// moved the route, or else its threshold's.
		x, t := math.Round(v*n), share
		if b.Below != nil {
			x = math.Round((1 - v) * n)
		}
		if !(t > 0) {
			// b has one side: Below is nil on a bound from above.
			if b.Above != nil {
				t = *b.Above
			} else {
				t = 1 - *b.Below
			}
		}
		if _, hi := p.recovery.of(x/n, n); hi <= t {
			continue // ruled out already
		}
		need := callsNeeded(x, t, p.recovery)
		rate := n / w.Seconds()
		in := fmtWindow(w)
		unit := c.format().unit // " calls" or " results"
		switch {
		case math.IsInf(need, 1):
			out = append(out, wanted{c.Signal + ": " + fixed(x, 0) + " failed of " + fixed(n, 0) + unit + " in " + in + "; no count of" + unit + " shows it within", w, true})
		case need > rate*w.Seconds()*1.05:
			out = append(out, wanted{c.Signal + ": " + fixed(x, 0) + " failed of " + fixed(n, 0) + unit + " in " + in + "; about " + fixed(need, 0) + unit + " needed, more than its " + in + " holds at " + digits(rate, 2) + unit + "/s", w, true})
		default:
			left := time.Duration((need - n) / rate * float64(time.Second)).Round(time.Minute)
			out = append(out, wanted{c.Signal + ": " + fixed(n, 0) + " of about " + fixed(need, 0) + unit + " needed in " + in + " at " + digits(rate, 2) + unit + "/s, about " + fmtWindow(max(left, time.Minute)) + " more", w, false})
		}
	}
	return out
}
