package evaluator

import (
	"time"

	"github.com/hermes-failover/hermes/traffic"
)

// Returning from idle. A failed-over route serves no users; its failback
// stages give it users' calls again. Those calls decide the stages
// (recovery.go), but a signal's longer windows (15m, 30m) still hold the
// calls from before the failover, the failure that moved the route: read
// with them, a healed route's first stage shows "18 of 141 calls in 15m
// ≥ 5.49 %", is sized at the far end of that and aborts (score 15–22
// against the failover line of 60), until the window has aged past the
// failover. Those calls are already in the route's Causes, the failure
// share each showed at least, which its probes and its stages' calls must
// rule out; counting them again as a failure now only keeps a healed
// route out.
//
// So while a failed-over route returns from idle, its user-call evidence
// is that of the calls since it stopped serving users (Move.QuietSince):
// a window of length w at time t counts only when t − w ≥ QuietSince, a
// window that began after the route went quiet and holds no call from
// before. For a signal whose own window is longer than that, no window is
// clean yet: it reads "0 of 0 calls", which shows no failure, and, for a
// signal that must rule out the failure that moved the route, rules out
// nothing, so the stage waits (Waiting says until when) rather than
// judging the leftovers either way. A stage's starts, advances, step-backs
// and aborts all read the same clean evidence, and a still-broken route
// shows its failure in the clean windows: its stage calls fail, and the
// stage steps back and aborts as before.
//
// QuietSince is the first tick of the failover (or of an aborted
// failback's return to no traffic) at which the route, given no share,
// shows no call in the shortest own window of its user-call signals
// (the 1m of hard_fail_ratio): its last call came at least that window
// before it, so every window that began at that tick or later is clean.
// Being late only makes fewer windows clean. A call still in flight then
// (a long stream), or not yet scraped, is counted later, as one of the
// stage's own: a few calls at most (docs/detection.md).
//
// QuietSince lives in the move record, which the local state file keeps
// across a restart; a route restored without it (an older state file, a
// lost one) is judged on every window, as before: after a crash Hermes
// does not assume when the route went quiet, at stage 0 it finds that
// again at the next quiet tick, and during a stage it cannot, so that
// stage reads the leftovers as it did before this rule.

// quietFor is how long route state rs, a failed-over route, has served
// no users at now: since its move record's QuietSince. Negative when that
// is unknown, or does not belong to this failover (before it, or after
// now: a record that does not match the restored state).
func quietFor(rs *RouteState, now time.Time) time.Duration {
	if rs.Level != traffic.Failover || rs.Move == nil || rs.Move.QuietSince.IsZero() ||
		rs.Move.QuietSince.Before(rs.Since) || rs.Move.QuietSince.After(now) {
		return -1
	}
	return now.Sub(rs.Move.QuietSince)
}

// cleanSamples is smps, the samples of one route in the order of p's
// columns, with the user-call evidence of a route that has served no
// users for quiet made clean, in place: each window of a signal with a
// volume that needs user traffic longer than quiet reads no sample (it
// adds nothing, evidence.go), and such a signal whose own window is
// longer reads 0 of 0 calls. Nothing changes for quiet < 0.
func cleanSamples(p *Policy, smps []Sample, quiet time.Duration) []Sample {
	if quiet < 0 {
		return smps
	}
	for i := range p.Config.Signals {
		sig := &p.Config.Signals[i]
		if !sig.RequiresTraffic || sig.Volume == "" {
			continue
		}
		for _, w := range p.windows[i] {
			if w.window > quiet && w.col < len(smps) {
				smps[w.col] = Sample{Status: StatusMissing, Reason: "holds calls from before the route stopped serving users"}
			}
		}
		if sig.Derived.Own > quiet && i < len(smps) && smps[i].Status == StatusOK && smps[i].Counted {
			smps[i] = Sample{Status: StatusOK, Counted: true}
		}
	}
	return smps
}

// callsNow reports what score sc shows of a route's users' calls now: in
// the shortest own window of the signals of p that count calls and need
// user traffic. serving: one counts a call; quiet: all of them count and
// none has a call. Neither when they do not say (missing, erroring).
func callsNow(p *Policy, sc Score) (serving, quiet bool) {
	shortest := time.Duration(-1)
	for i := range p.Config.Signals {
		if s := &p.Config.Signals[i]; s.RequiresTraffic && s.Volume != "" && (shortest < 0 || s.Derived.Own < shortest) {
			shortest = s.Derived.Own
		}
	}
	if shortest < 0 {
		return false, false
	}
	quiet = true
	for _, c := range sc.Contributions {
		i, ok := p.signalIndex[c.Signal]
		if !ok {
			continue
		}
		s := &p.Config.Signals[i]
		if !s.RequiresTraffic || s.Volume == "" || s.Derived.Own != shortest {
			continue
		}
		switch {
		case c.Counted && c.Status != StatusError && c.Volume > 0:
			return true, false
		case !c.Counted || c.Status == StatusError || !(c.Volume == 0):
			quiet = false
		}
	}
	return false, quiet
}

// withQuiet is route state rs, as decided at now, with its move record's
// QuietSince kept: set at the first tick at which a failed-over route
// given no share (idle) shows no call now, cleared once such a route at
// stage 0 serves users again (degraded mode, an operator's split) or its
// failback stepped back to no traffic (withAbort clears it), kept while
// its stages serve. The record is never written in place.
func withQuiet(p *Policy, rs RouteState, idle bool, now time.Time) RouteState {
	if rs.Level != traffic.Failover || rs.Stage > 0 || rs.Move == nil || rs.Score.Held() {
		return rs
	}
	serving, quiet := callsNow(p, rs.Score)
	switch {
	case serving && !rs.Move.QuietSince.IsZero():
		m := *rs.Move
		m.QuietSince = time.Time{}
		rs.Move = &m
	case idle && quiet && rs.Move.QuietSince.IsZero():
		m := *rs.Move
		m.QuietSince = now
		rs.Move = &m
	}
	return rs
}

// quietWanted is, for route state rs at a failback stage at now, a line
// for each signal that must rule out the failure that moved the route and
// has no clean window yet (cleanSamples): when its own window will hold
// only the calls since the route stopped serving users. Waiting's
// WaitCalls lines.
func quietWanted(p *Policy, rs RouteState, now time.Time) []Wait {
	quiet := quietFor(&rs, now)
	if quiet < 0 {
		return nil
	}
	var out []Wait
	scope := scopeOf(&rs)
	for i := range p.Config.Signals {
		sig := &p.Config.Signals[i]
		if !sig.RequiresTraffic || sig.Volume == "" || sig.Derived.Own <= quiet {
			continue
		}
		if strict, _ := scope.rules(sig, false); !strict {
			continue
		}
		q := rs.Move.QuietSince
		out = append(out, Wait{WaitCalls, sig.Name + ": judged on the calls since the route stopped serving users at " + q.UTC().Format(time.RFC3339) +
			"; its " + fmtWindow(sig.Derived.Own) + " window holds only those from " + q.Add(sig.Derived.Own).UTC().Format(time.RFC3339)})
	}
	return out
}
