package evaluator

import (
	"strconv"
	"time"

	"github.com/hermes-failover/hermes/traffic"
)

// decideRoute moves one route's state machine by one tick. It is pure: the
// caller passes the route's score, whether the route gets user traffic now
// (idle) and the time.
func decideRoute(p *Policy, prev RouteState, sc Score, idle bool, now time.Time) (RouteState, []transition) {
	rs := prev
	rs.Score = sc
	decisive, arrived, arrival := decisiveLevel(p, prev, sc, now)
	rs.Arrival = arrival
	if rs.Level != traffic.Normal {
		// What holds the route down, as its evidence shows it now
		// (recovery.go).
		rs.Causes = withCauses(p, rs.Causes, sc)
	}
	rs.Failbacks = pruneFailbacks(prev.Failbacks, now, p.Config.Failback.Window)
	updateBelow(p, &rs, sc, now)

	if rs.Level == traffic.Manual {
		rs.RecoverSince = time.Time{}
		return rs, nil
	}

	// Down-moves first: safety before recovery.
	target, why := downTarget(p, rs, sc, decisive, arrived, now)
	switch {
	case target > rs.Level:
		next := moveTo(p, rs, target, now)
		next.Causes = withCauses(p, rs.Causes, sc)
		next.Move = moveRecord(rs.Move, target, why, sc, now)
		return next, []transition{{from: prev.Level, to: target, why: why}}
	case target == traffic.Failover && rs.Level == traffic.Failover && rs.Stage > 0:
		// Bad enough to fail over again during a failback: back to no
		// traffic at once, not one stage per tick.
		why = "failback aborted: " + why
		// The level does not change: Since stays the failover's, so
		// status pages and the restored state date it from the failover.
		next := moveTo(p, rs, traffic.Failover, now)
		next.Since = prev.Since
		next.Causes = withCauses(p, rs.Causes, sc)
		next.FailingSince = failingAfterAbort(prev, now)
		next.Move = withAbort(p, rs.Move, prev.Stage, why, now)
		return next, []transition{{from: traffic.Failover, to: traffic.Failover, stageFrom: prev.Stage, stageTo: 0, why: why}}
	}

	if rs.Level == traffic.Failover {
		return decideFailover(p, prev, rs, sc, idle, now)
	}
	if rs.Level == traffic.Normal {
		rs.RecoverSince = time.Time{}
		return rs, nil
	}
	// Warm or shed: up one level with hysteresis, recover_for and cooldown.
	// A blind tick holds the recover clock; only data that show the route
	// within (Low, the score the data show at least) keep it running.
	lc := p.level(rs.Level)
	if sc.Held() {
		return rs, nil
	}
	if max(sc.Floor, sc.LowFloor) >= rs.Level || sc.Low < lc.RecoverAbove {
		rs.RecoverSince = time.Time{}
		return rs, nil
	}
	if rs.RecoverSince.IsZero() {
		rs.RecoverSince = now
	}
	if now.Sub(rs.RecoverSince) < lc.RecoverFor || now.Sub(rs.Since) < lc.Cooldown {
		return rs, nil
	}
	to := rs.Level - 1
	why = "score " + fixed(sc.Low, 1) + " ≥ " + gText(lc.RecoverAbove) + " for " + lc.RecoverFor.String()
	return moveTo(p, rs, to, now), []transition{{from: prev.Level, to: to, why: why}}
}

// updateBelow tracks, per degraded level, since when the score the data
// suggest (Score.Suggested, which a proof implies) has been continuously
// bad enough for it (or a floor has demanded it): the level's dwell runs
// from then, and downTarget moves the route once it has run and the
// score the data prove (Value) shows the level on that tick. So a thin
// failure whose proof arrives slowly has mostly run its dwell by then,
// while a burst, whose failures one scrape interval holds, suggests
// nothing before its proof (docs/detection.md, "The dwell's clock"). On a tick
// with signals missing (see Score.Held) the score is that of the data
// present: missing data add no penalty, so a score below a threshold shows
// the route at least that bad, and its clock runs; a score above shows
// nothing (the missing signals may hide the cost), so the clock is held,
// neither restarted nor ended.
func updateBelow(p *Policy, rs *RouteState, sc Score, now time.Time) {
	for l := traffic.Warm; l <= traffic.Failover; l++ {
		switch {
		case sc.Suggested() < p.level(l).Below || sc.Floor >= l:
			if rs.BelowSince[l].IsZero() {
				rs.BelowSince[l] = now
			}
		case !sc.Held():
			rs.BelowSince[l] = time.Time{}
		}
	}
}

// downTarget is the most severe level the route must move down to now:
// immediately for immediate caps and floors, after dwell otherwise.
// decisive is the level decisive evidence demands without dwell, arrived
// whether failures arriving on two ticks showed it (decisiveLevel).
func downTarget(p *Policy, rs RouteState, sc Score, decisive traffic.Level, arrived bool, now time.Time) (traffic.Level, string) {
	cur := rs.Level
	if cur == traffic.Failover && rs.Stage > 0 {
		// During failback a dip is handled by the stage logic, unless the
		// route is bad enough to fail over again.
		cur = traffic.Shed
	}
	if sc.ImmediateLevel > cur {
		return sc.ImmediateLevel, "immediate (cap or floor, no dwell)"
	}
	// The evidence present moves a route down even when other signals are
	// missing (their absence can only hide a cost, never add health); a
	// tick that shows nothing for a level completes no dwell.
	if decisive > cur {
		if arrived {
			return decisive, "decisive evidence at " + fmtConfidence(p.Config.Scoring.DecisiveConfidence) + ", arriving on 2 ticks (no dwell)"
		}
		return decisive, "decisive evidence at " + fmtConfidence(p.Config.Scoring.DecisiveConfidence) + " (no dwell)"
	}
	for l := traffic.Failover; l > cur; l-- {
		since := rs.BelowSince[l]
		shown := sc.Proven() < p.level(l).Below || sc.Floor >= l
		if !since.IsZero() && now.Sub(since) >= p.level(l).Dwell && shown {
			if sc.Floor >= l && sc.Value >= p.level(l).Below {
				return l, "floor demands " + l.String() + " for " + p.level(l).Dwell.String()
			}
			return l, "score " + fixed(sc.Value, 1) + " < " + gText(p.level(l).Below) + " for " + p.level(l).Dwell.String()
		}
	}
	return cur, ""
}

// moveTo puts the route at level to, resetting timers that belong to the old level.
func moveTo(p *Policy, rs RouteState, to traffic.Level, now time.Time) RouteState {
	if to == traffic.Failover && (rs.Level != traffic.Failover || rs.Stage > 0) {
		rs.FailingSince = now
	}
	rs.Level = to
	rs.Since = now
	if to == traffic.Normal {
		rs.Causes = nil
		rs.Move = nil
	}
	rs.Stage = 0
	rs.StageSince = time.Time{}
	rs.RecoverSince = time.Time{}
	return rs
}

// decideFailover handles a failed-over route: manual escalation, the start
// of a failback, and its stages.
func decideFailover(p *Policy, prev, rs RouteState, sc Score, idle bool, now time.Time) (RouteState, []transition) {
	fb := p.Config.Failback
	fo := p.level(traffic.Failover)
	if rs.Stage > 0 {
		// A stage carries real traffic: any dip steps back one stage,
		// on evidence of a failure now (failingNow: not a longer window's
		// memory of the outage beside one ordinary failed probe).
		if sc.Held() {
			return rs, nil
		}
		if (sc.Value < fb.MinScore && failingNow(p, sc)) || sc.Floor >= traffic.Failover {
			rs.Stage--
			rs.StageSince = now
			rs.Causes = withCauses(p, rs.Causes, sc)
			why := "score " + fixed(sc.Value, 1) + " < " + gText(fb.MinScore) + " during failback stage " + strconv.Itoa(prev.Stage)
			if rs.Stage == 0 {
				// Back to no traffic: the manual_after clock runs again.
				rs.RecoverSince = time.Time{}
				rs.FailingSince = failingAfterAbort(prev, now)
				rs.Move = withAbort(p, rs.Move, prev.Stage, why, now)
			}
			return rs, []transition{{from: traffic.Failover, to: traffic.Failover, stageFrom: prev.Stage, stageTo: rs.Stage, why: why}}
		}
		if idle {
			// A stage is judged from its real traffic: while an operator's
			// pin or pause keeps the route's share at 0, it is not observed.
			rs.StageSince = now
			return rs, nil
		}
		if now.Sub(rs.StageSince) < fb.Observe {
			return rs, nil
		}
		if sc.Low < fb.MinScore || sc.LowFloor >= traffic.Failover {
			// Not shown bad, not yet shown good: the stage waits.
			return rs, nil
		}
		// Users' own calls showed the route healthy at this stage: it is
		// no longer failing (the manual_after clock ends).
		rs.FailingSince = time.Time{}
		if rs.Stage < len(fb.Stages) {
			rs.Stage++
			rs.StageSince = now
			why := "score ≥ " + gText(fb.MinScore) + " for " + fb.Observe.String()
			return rs, []transition{{from: traffic.Failover, to: traffic.Failover, stageFrom: prev.Stage, stageTo: rs.Stage, why: why}}
		}
		// The last stage (100 %) held: the failback is complete.
		why := "failback complete: every stage held score ≥ " + gText(fb.MinScore) + " for " + fb.Observe.String()
		rs = moveTo(p, rs, traffic.Normal, now)
		rs.Failbacks = append(rs.Failbacks, now)
		rs.Released = false
		return rs, []transition{{from: traffic.Failover, to: traffic.Normal, stageFrom: prev.Stage, why: why}}
	}

	// Stage 0: no user traffic; recovery is judged from probes. A blind
	// tick holds the recover and manual_after clocks.
	if sc.Held() {
		return rs, nil
	}
	// A route whose own score is good but that a floor holds (an empty
	// quota) is waiting, not failing: it never goes to manual, and fails
	// back once the floor lifts. One whose score is shown bad (even its
	// healthy side, Value, is below recover_above) is failing, and a person
	// is called once it has failed for manual_after since its failover,
	// failbacks that did not get past their first stage included, on
	// evidence of a failure now (failingNow). One neither shown bad nor
	// yet shown good (its probes' few results, or a trickle of calls,
	// cannot prove it either way yet) is waiting for evidence: the
	// manual_after clock holds and calls no one.
	healthy := sc.Low >= fo.RecoverAbove
	floored := max(sc.Floor, sc.LowFloor) >= traffic.Failover
	if !healthy || floored {
		rs.RecoverSince = time.Time{}
		if healthy {
			rs.FailingSince = time.Time{} // waiting for the floor, not failing
			return rs, nil
		}
		if sc.Value >= fo.RecoverAbove || !failingNow(p, sc) {
			return rs, nil // waiting for evidence, not shown failing now
		}
		if !idle {
			// Failed over yet serving: degraded mode (every route bad)
			// serves on the least bad one. The service needs a person
			// (HermesAllRoutesBad pages), not this route: it comes back by
			// itself, on its users' own calls, once it recovers.
			return rs, nil
		}
		if rs.FailingSince.IsZero() {
			rs.FailingSince = now
		}
		if now.Sub(rs.FailingSince) >= fb.ManualAfter {
			why := "still failing " + fb.ManualAfter.String() + " after failover (score " + fixed(sc.Value, 1) + ")"
			next := moveTo(p, rs, traffic.Manual, now)
			// The manual page supersedes an aborted failback's: the record
			// keeps the cause, not the abort.
			next.Move = withoutAbort(rs.Move)
			return next, []transition{{from: traffic.Failover, to: traffic.Manual, why: why}}
		}
		return rs, nil
	}
	if rs.RecoverSince.IsZero() {
		rs.RecoverSince = now
	}
	if now.Sub(rs.RecoverSince) < fo.RecoverFor || now.Sub(rs.Since) < fo.Cooldown {
		return rs, nil
	}
	if !rs.Released && len(rs.Failbacks) >= fb.MaxCompleted {
		// Budget spent; the failback waits (reported by status). The route
		// has shown its recovery for recover_for and no failback can undo
		// that: it is no longer failing.
		rs.FailingSince = time.Time{}
		return rs, nil
	}
	rs.Stage = 1
	rs.StageSince = now
	rs.Move = withoutAbort(rs.Move)
	why := "score " + fixed(sc.Low, 1) + " ≥ " + gText(fo.RecoverAbove) + " for " + fo.RecoverFor.String() + ": failback starts"
	return rs, []transition{{from: traffic.Failover, to: traffic.Failover, stageFrom: 0, stageTo: 1, why: why}}
}

// failingAfterAbort is when a route whose failback was given up at now
// has been failing since: since before the failback when it never got past
// its first stage (users' calls never showed it healthy, so the
// manual_after clock was never stopped), else from now.
func failingAfterAbort(prev RouteState, now time.Time) time.Time {
	if prev.Stage == 1 && !prev.FailingSince.IsZero() {
		return prev.FailingSince
	}
	return now
}

// NextFailbackAllowed is when the failback budget allows the next failback
// to start; zero when it does now.
func NextFailbackAllowed(p *Policy, rs RouteState) time.Time {
	fb := p.Config.Failback
	if rs.Released || len(rs.Failbacks) < fb.MaxCompleted {
		return time.Time{}
	}
	return rs.Failbacks[len(rs.Failbacks)-fb.MaxCompleted].Add(fb.Window)
}

func pruneFailbacks(fbs []time.Time, now time.Time, window time.Duration) []time.Time {
	var out []time.Time
	for _, t := range fbs {
		if now.Sub(t) < window {
			out = append(out, t)
		}
	}
	return out
}

// transition is a level or failback-stage change of one route.
type transition struct {
	from, to           traffic.Level
	stageFrom, stageTo int
	why                string
}
