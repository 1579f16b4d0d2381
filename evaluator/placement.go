package evaluator

import (
	"strconv"
	"time"

	"github.com/hermes-failover/hermes/traffic"
)

// Placement explains, for people, what places route state rs at its level
// at now under p: the floors and caps on its score, the thresholds, the
// dwell a move down waits for, and the hysteresis, recover_for, cooldown or
// failback budget a move up waits for. It reads the same fields decideRoute
// does; `hermes explain` prints it from the status API.
func Placement(p *Policy, rs RouteState, now time.Time) []string {
	sc := rs.Score
	var out []string

	th := "score " + fixed(sc.Value, 1) + "; moves down below"
	for l := traffic.Warm; l <= traffic.Failover; l++ {
		th += " " + gText(p.level(l).Below) + " (" + l.String() + ", dwell " + p.level(l).Dwell.String() + ")"
		if l < traffic.Failover {
			th += ","
		}
	}
	out = append(out, th)
	for _, c := range sc.Contributions {
		if c.Status != StatusOK {
			continue
		}
		if c.Floor > traffic.Normal {
			out = append(out, "floor: "+c.Signal+" "+fmtValue(c.Value)+" forces at least "+c.Floor.String())
		}
		if c.CapsAt >= 0 {
			out = append(out, "cap: "+c.Signal+" "+fmtValue(c.Value)+" caps the score at "+gText(c.CapsAt))
		}
	}
	if sc.Held() {
		out = append(out, "hold: no data for "+listText(sc.Missing)+"; the level cannot improve until they answer")
	}
	if JudgedByProbes(p, sc) {
		out = append(out, "idle: no user traffic; judged by its probes alone")
	}
	return append(out, WaitTexts(Waiting(p, rs, now))...)
}

// JudgedByProbes reports whether score sc had no user traffic for any
// signal of p that needs it: the route is idle and its probes alone
// judge it.
func JudgedByProbes(p *Policy, sc Score) bool {
	idle := idleSignals(sc)
	return len(idle) > 0 && len(idle) == countRequiringTraffic(p)
}

// Waiting is the part of Placement that says what route state rs waits
// for at now: the release of a manual route, the failback of a failed-over
// one, the dwell of a move down, the hysteresis, recover_for and cooldown
// of a move up, each line with its kind. Status pages say it beside the
// level.
func Waiting(p *Policy, rs RouteState, now time.Time) []Wait {
	sc := rs.Score
	var out []Wait
	stamp := func(t time.Time) string { return t.UTC().Format(time.RFC3339) }
	switch rs.Level {
	case traffic.Manual:
		return append(out, Wait{WaitRelease, "manual since " + stamp(rs.Since) + ": stays until an operator releases it"})
	case traffic.Failover:
		return append(out, failoverPlacement(p, rs, now, stamp)...)
	}

	// Down: the most severe level whose dwell is running.
	for l := traffic.Failover; l > rs.Level; l-- {
		if since := rs.BelowSince[l]; !since.IsZero() {
			out = append(out, Wait{WaitDwell, "dwell: below " + gText(p.level(l).Below) + " (or floored) for " + l.String() + " since " + stamp(since) +
				"; moves to " + l.String() + " at " + stamp(since.Add(p.level(l).Dwell)) + " if it stays and the calls prove it then"})
			break
		}
	}
	if rs.Level == traffic.Normal {
		return out
	}
	// Up: hysteresis, recover_for and cooldown of the current level.
	lc := p.level(rs.Level)
	up := rs.Level - 1
	switch {
	case sc.Floor >= rs.Level:
		out = append(out, Wait{WaitFloor, "hold: a floor keeps the route at " + sc.Floor.String()})
	case sc.Held():
	case sc.Value < lc.RecoverAbove:
		out = append(out, Wait{WaitHysteresis, "hysteresis: returns to " + up.String() + " once the score is ≥ " + gText(lc.RecoverAbove) + " for " + lc.RecoverFor.String() +
			" (and " + lc.Cooldown.String() + " after entering " + rs.Level.String() + ")"})
	case sc.Low < lc.RecoverAbove:
		out = append(out, Wait{WaitEvidence, "waiting for evidence: returns to " + up.String() + " once the calls show a score ≥ " + gText(lc.RecoverAbove) + " for " + lc.RecoverFor.String() +
			" (they show at least " + fixed(sc.Low, 1) + ")"})
		out = append(out, callsWanted(p, rs)...)
	default:
		at := laterOf(rs.RecoverSince.Add(lc.RecoverFor), rs.Since.Add(lc.Cooldown))
		if rs.RecoverSince.IsZero() {
			at = laterOf(now.Add(lc.RecoverFor), rs.Since.Add(lc.Cooldown))
		}
		out = append(out, Wait{WaitRecovering, "recovering: score ≥ " + gText(lc.RecoverAbove) + "; returns to " + up.String() + " at " + stamp(at) +
			" if it stays (recover_for " + lc.RecoverFor.String() + ", cooldown " + lc.Cooldown.String() + ")"})
	}
	return out
}

func failoverPlacement(p *Policy, rs RouteState, now time.Time, stamp func(time.Time) string) []Wait {
	fb, fo, sc := p.Config.Failback, p.level(traffic.Failover), rs.Score
	if rs.Stage > 0 {
		next := rs.StageSince.Add(fb.Observe)
		// The last stage has no next one: it completes the failback.
		step := "the next stage"
		if rs.Stage >= len(fb.Stages) {
			step = "the failback completes"
		}
		if !now.Before(next) && sc.Low < fb.MinScore {
			// Observed long enough: the stage waits for its calls to show
			// the route healthy, not for a time.
			// A stage whose callers send nothing is judged by its probes
			// alone (score.go), held until they rule out what moved it.
			shown := ": " + step + " once its calls show"
			if callersSentNone(p, &sc) {
				shown = "; its callers send no calls: " + step + " once its probes show"
			}
			return append([]Wait{{WaitFailback, "failback stage " + strconv.Itoa(rs.Stage) + " of " + strconv.Itoa(len(fb.Stages)) + " since " + stamp(rs.StageSince) +
				", observed for " + fb.Observe.String() + shown + " a score ≥ " + gText(fb.MinScore) + " (they show at least " + fixed(sc.Low, 1) + ")"}},
				append(quietWanted(p, rs, now), callsWanted(p, rs)...)...)
		}
		return []Wait{{WaitFailback, "failback stage " + strconv.Itoa(rs.Stage) + " of " + strconv.Itoa(len(fb.Stages)) + " since " + stamp(rs.StageSince) +
			": " + step + " at " + stamp(next) + " if the score stays ≥ " + gText(fb.MinScore) + " (observe " + fb.Observe.String() + ")"}}
	}
	var out []Wait
	if servesUsers(p, sc) {
		// decideFailover never sends a failed-over route that still
		// serves to manual: degraded mode (every route bad) serves on it.
		out = append(out, Wait{WaitServing, "serving while failed over (every route bad, or an operator's split): judged on its users' own calls, never sent to manual"})
	} else if !rs.FailingSince.IsZero() {
		out = append(out, Wait{WaitFailing, "failing since " + stamp(rs.FailingSince) + ": goes to manual at " + stamp(rs.FailingSince.Add(fb.ManualAfter)) +
			", or the first tick after that still shows it failing, unless it recovers and users' calls confirm a failback stage"})
	}
	if sc.Low >= fo.RecoverAbove && max(sc.Floor, sc.LowFloor) >= traffic.Failover {
		out = append(out, Wait{WaitFloor, "waiting: a floor holds the route at " + max(sc.Floor, sc.LowFloor).String() + " while its score is good; it fails back once the floor lifts, never to manual"})
	}
	switch {
	case sc.Held() || sc.Floor >= traffic.Failover:
	case sc.Value < fo.RecoverAbove:
		out = append(out, Wait{WaitHysteresis, "hysteresis: the staged failback starts once the score is ≥ " + gText(fo.RecoverAbove) + " for " + fo.RecoverFor.String() +
			" (and " + fo.Cooldown.String() + " after the failover)"})
	case sc.Low < fo.RecoverAbove:
		out = append(out, Wait{WaitEvidence, "waiting for evidence: not shown failing, not yet shown healthy (the score is at least " + fixed(sc.Low, 1) +
			"); the staged failback starts once it is shown ≥ " + gText(fo.RecoverAbove) + " for " + fo.RecoverFor.String() + ", and no one is called while it waits"})
		out = append(out, callsWanted(p, rs)...)
	default:
		at := laterOf(rs.RecoverSince.Add(fo.RecoverFor), rs.Since.Add(fo.Cooldown))
		if next := NextFailbackAllowed(p, rs); next.After(at) {
			out = append(out, Wait{WaitBudget, "failback budget: " + strconv.Itoa(fb.MaxCompleted) + " failbacks in " + fb.Window.String() + " spent; the next may start at " + stamp(next)})
			at = next
		}
		out = append(out, Wait{WaitRecovering, "recovering: the staged failback starts at " + stamp(at) + " if the score stays ≥ " + gText(fo.RecoverAbove)})
	}
	return out
}

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// servesUsers reports whether sc shows user traffic now: a signal of
// calls counts calls in its own window, the shortest it reads. A signal
// without a count of calls says nothing of now: a mean reply size over
// 15m (response_size_ratio) keeps a value for 15 minutes after the last
// call.
func servesUsers(p *Policy, sc Score) bool {
	for _, c := range sc.Contributions {
		if i, ok := p.signalIndex[c.Signal]; ok && p.Config.Signals[i].RequiresTraffic && p.Config.Signals[i].Volume != "" &&
			!c.Idle && c.Status == StatusOK && c.Counted && c.Volume > 0 {
			return true
		}
	}
	return false
}

// idleSignals are the signals of sc without user traffic.
func idleSignals(sc Score) []string {
	var out []string
	for _, c := range sc.Contributions {
		if c.Idle {
			out = append(out, c.Signal)
		}
	}
	return out
}

// countRequiringTraffic is how many signals of p need user traffic.
func countRequiringTraffic(p *Policy) int {
	n := 0
	for _, s := range p.Config.Signals {
		if s.RequiresTraffic {
			n++
		}
	}
	return n
}
