package evaluator

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/traffic"
)

// Moving up. A route moves down when a signal's calls show a threshold
// crossed at scoring.confidence. It moves up (a level up, a failback's
// start, its next stage) when the evidence would, with power
// scoring.recovery_confidence, have shown the failure that moved it, had
// it still been there, and shows no failure. Each move down records its
// causes (Cause): the signals that cost the score, and the failure share
// each showed at least; every tick below normal adds the signals that cost
// it then and raises a share its evidence has since shown larger. Low,
// the score up-moves read, then takes each signal at one end of its
// interval:
//
//   - The evidence that must rule the failure out: the route's causes
//     while it serves users, and its probes (every signal that needs no
//     user traffic) while it serves none, since a failed-over route's
//     recovery is judged from its probes, then from the calls of its
//     first failback stage. Such a signal is taken at the end of its
//     interval farthest from health, at the recovery confidence, until
//     that end rules out the failure share that moved the route (the
//     cause's own, or for a probe the largest of the causes'); then it
//     has done its part and is taken as every other signal is.
//   - Every other signal at the end nearest to health, as Value takes
//     it: it must not show a failure, and need not prove a health that
//     its few samples never could (an end-to-end probe every 2 min
//     cannot rule out 10 % failing in less than an hour).
//
// So a failback stage at 0.3 calls/s, moved by 30 % error templates,
// rules them out in 9 calls without failure; it does not wait to prove a
// 1 % hard-failure ratio, which would take 300 calls. A route whose
// causes are unknown (restored after a restart), or whose causes are no
// share of calls (latency, quota), has no failure share to rule out: its
// evidence must show it within every threshold at the far end, as
// before. Hermes does not assume what moved it.
//
// The error rate: a route still failing at the share that moved it shows
// that share ruled out with a chance of at most 1 - recovery_confidence
// at each decision (the coverage of the one-sided bound), and
// recover_for and a stage's observe ask for it tick after tick.

// Cause is one signal that moved a route down.
type Cause struct {
	Signal string `json:"signal"`
	// Share is the failure share its evidence showed at least when it
	// moved the route (the share of calls or probe results failing): what
	// an up-move must rule out. 0 when the signal is no share of calls.
	Share float64 `json:"share,omitempty"`
}

// recoveryScope says how a route's Low judges its signals.
type recoveryScope struct {
	// causes are the route's causes (RouteState.Causes); all says they
	// are unknown.
	causes []Cause
	all    bool
	// quiet is how long a failed-over route has served no users, whose
	// user-call evidence is then only the calls since (quiet.go);
	// negative when it is not returning from idle, or that is unknown.
	quiet time.Duration
}

// scopeOf is the recovery scope of route state rs.
func scopeOf(rs *RouteState) recoveryScope {
	return recoveryScope{causes: rs.Causes, all: rs.Level != traffic.Normal && len(rs.Causes) == 0, quiet: -1}
}

// scopeAt is scopeOf(rs) at now, with how long the route has been quiet.
func scopeAt(rs *RouteState, now time.Time) recoveryScope {
	s := scopeOf(rs)
	s.quiet = quietFor(rs, now)
	return s
}

// rules reports whether sig's evidence must rule out the failure that
// moved the route, for a route that gets no user traffic when idle, and
// the failure share to rule out (0: none known, within every threshold
// instead).
func (s recoveryScope) rules(sig *rules.SignalConfig, idle bool) (bool, float64) {
	if idle {
		if sig.RequiresTraffic {
			return false, 0
		}
		share := 0.0
		for _, c := range s.causes {
			share = max(share, c.Share)
		}
		return true, share
	}
	if !sig.RequiresTraffic {
		return false, 0
	}
	for _, c := range s.causes {
		if c.Signal == sig.Name {
			return true, c.Share
		}
	}
	return s.all, 0
}

// rulesOut reports whether far, a signal's interval at the recovery
// confidence, rules out a failure share of share for the direction of
// bounds bs: its failure share at most is below it.
func rulesOut(far interval, bs []rules.Bound, share float64) bool {
	if !(share > 0) || len(bs) == 0 || !far.counts {
		return false
	}
	if bs[0].Below != nil {
		return 1-far.lo < share
	}
	return far.hi < share
}

// nearEnd is iv collapsed onto its end nearest to health for the
// direction of bounds bs (the first one's): Low takes a signal that does
// not rule out a failure there.
func nearEnd(iv interval, bs []rules.Bound) interval {
	if len(bs) == 0 {
		return iv
	}
	if bs[0].Below != nil {
		iv.lo, iv.seenLo = iv.hi, iv.seenHi
	} else {
		iv.hi, iv.seenHi = iv.lo, iv.seenLo
	}
	return iv
}

// withCauses is causes with every signal whose penalty, cap or floor sc
// shows, in policy order: a new slice when any is added or changes. A
// signal already a cause keeps the larger of its shares: the failure is
// at least what its evidence established at any tick while it held the
// route down (a failover on the first minute's 23 calls shows 30 %
// failing as at least 10 %; the calls that follow show it as at least
// 20 %).
func withCauses(p *Policy, causes []Cause, sc Score) []Cause {
	var out []Cause
	for i := range sc.Contributions {
		c := &sc.Contributions[i]
		if c.Status != StatusOK || !(c.Penalty > 0 || c.CapsAt >= 0 || c.Floor > traffic.Normal) {
			continue
		}
		share := failureShare(p, c)
		k := slices.IndexFunc(causes, func(x Cause) bool { return x.Signal == c.Signal })
		if k >= 0 && causes[k].Share >= share {
			continue
		}
		if out == nil {
			out = slices.Clone(causes)
		}
		if k >= 0 {
			out[k].Share = share
			continue
		}
		out = append(out, Cause{Signal: c.Signal, Share: share})
	}
	if out == nil {
		return causes
	}
	// Policy order; causes of signals a reload removed stay at the end.
	slices.SortStableFunc(out, func(a, b Cause) int {
		ia, oka := p.signalIndex[a.Signal]
		ib, okb := p.signalIndex[b.Signal]
		switch {
		case !oka || !okb:
			return cmp.Compare(boolInt(!oka), boolInt(!okb))
		}
		return cmp.Compare(ia, ib)
	})
	return out
}

// failureShare is the failure share that contribution c's evidence
// shows at least: the proven end of a counted ratio (failures, or one
// minus successes); 0 for a signal that is no share of calls.
func failureShare(p *Policy, c *Contribution) float64 {
	i, ok := p.signalIndex[c.Signal]
	if !ok || !c.Counted || c.format() == nil || c.format().samples || len(p.scoring.bounds[i]) == 0 || c.Unproven {
		return 0
	}
	v := c.bound
	if p.scoring.bounds[i][0].Below != nil {
		v = 1 - v
	}
	return math.Max(0, math.Min(1, v))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// failingNow reports whether a signal that costs score sc shows the
// failure in its own window, the shortest it has, at the recovery
// confidence: the evidence a person is called on, and a failback stage
// steps back on. A longer window proves
// failures on thin traffic but also remembers them: right after an
// outage, the outage in an end-to-end probe's 40m window and one
// ordinary failure among the last 5m's three results would together show
// the route failing while it has recovered. A signal without a count
// shows its value now.
func failingNow(p *Policy, sc Score) bool {
	for i := range sc.Contributions {
		c := &sc.Contributions[i]
		if c.Status != StatusOK || !(c.Penalty > 0 || c.CapsAt >= 0 || c.Floor > traffic.Normal) {
			continue
		}
		idx, ok := p.signalIndex[c.Signal]
		if !ok || !c.Counted || p.Config.Signals[idx].Volume == "" {
			return true
		}
		if len(p.scoring.bounds[idx]) == 0 {
			continue
		}
		b := p.scoring.bounds[idx][0]
		if _, past := beyond(b, healthySide(proportionInterval(c.Value, c.Volume, p.recovery), b)); past {
			return true
		}
	}
	return false
}
