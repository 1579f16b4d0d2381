package evaluator

import (
	"math"
	"time"

	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/traffic"
)

// Arriving failures. Decisive evidence (evidence.go) skips the dwell, but
// a window's count says how many calls failed in it, not when: a burst of
// 502s inside one scrape (a gateway or upstream restart, a deploy) reads
// in a 1m window exactly as the first 15 seconds of an outage do, with the
// same overwhelming count, and it stays there for the window's length. The
// dwell is what tells the two apart, so the decisive path that skips it
// asks for what the dwell would have shown: failures still arriving. It
// moves a route only when the calls of the newest interval alone demand
// the level, at scoring.decisive_confidence, on two ticks within the
// shortest counted window: the tick that shows the failure and one more.
// A one-scrape burst arrives once and then only sits in the window; an
// outage arrives on every tick. The cost is one evaluation interval on a
// sudden outage (a 40 % step fails over at +15 s, not on the first tick
// that sees it); a gradual failure is unaffected, since it moves on the
// dwell, and immediate caps and floors still act on the tick that shows
// them.
//
// The newest interval is read from how a signal's own-window ratio moved
// since the last tick: with k = window / evaluation interval ticks per
// window, v_t − v_{t−1} = (f_new − f_gone) / k, where f_new is the share
// of the interval that arrived and f_gone that of the one that left the
// window. For a failure share (a bound with `above`) f_gone ≥ 0, so
// f_new ≥ k·Δv; for a success share (`below`) f_gone ≤ 1, so
// f_new ≤ 1 + k·Δv. Either way the estimate is the one nearest to health,
// and it is taken over the interval's calls, the window's count over k.
// The newest interval must also have brought calls: at least half of an
// interval's share of the window's count more than what the last window
// keeps. In a scrape gap the window loses its newest samples, and the
// failures still in it weigh more, which would read as arriving. It
// needs no memory beyond the last tick's score, which a restart loses:
// the first tick after one cannot start the count. (A count per scrape
// would need a query per signal per interval; the ratios are already
// there.) A scrape interval longer than the evaluation interval makes
// failures arrive on every other tick, which the window of two arrivals
// allows for.

// Failures spread over intervals. Arrival is only needed where one scrape
// could hold the whole count: at 20 req/s a 15-second interval holds 300
// calls, enough for any burst. On thin traffic it holds a few, and 18
// failures among 82 calls in 5 minutes cannot be one interval's: there the
// decisive reading stands on its own. So the decisive reading is taken
// again on the windows whose failures outnumber one interval's calls
// (spreadSample); the level it still demands (Score.SpreadLevel) skips the
// dwell on the tick that shows it, as before. Beyond it, only failures
// arriving on two ticks do. A window with fewer failures than an
// interval's calls could have had them all in one scrape: a burst is
// smaller than the interval it happened in.

// spreadSample is a window's sample of a proportion v over n calls as
// the spread reading takes it: whole when its failures outnumber the per
// calls of one interval, so that no single interval can hold them, and
// no evidence otherwise (above: v is a failure share; else a success
// share).
func spreadSample(v, n, per float64, above bool) (float64, float64) {
	fail := v * n
	if !above {
		fail = (1 - v) * n
	}
	if !(per > 0) || !(fail > per) {
		return 0, 0
	}
	return v, n
}

// intervalCalls is how many calls one evaluation interval holds for
// signal i, counted in c with its windows' samples in smps: those of the
// own window over its intervals, or of a longer window over its own if
// more. A window that holds less than its length (data that began, or
// came back, a minute ago) spreads its calls over intervals that have
// none. 0 for a signal not counted in calls.
func intervalCalls(p *Policy, i int, c *Contribution, smps []Sample) float64 {
	k := p.arrivals.ticks[i]
	if k == 0 {
		return 0
	}
	per := c.Volume / k
	step := p.Config.Global.EvaluationInterval
	for _, w := range p.windows[i] {
		if w.col < len(smps) && smps[w.col].Status == StatusOK && smps[w.col].Volume > 0 {
			per = mathMax(per, smps[w.col].Volume/(float64(w.window)/float64(step)))
		}
	}
	return per
}

// spreadInterval is signal i's decisive interval (see withWindows) from
// the windows whose failures no single interval can hold (spreadSample).
func spreadInterval(p *Policy, i int, c *Contribution, smps []Sample) interval {
	k, above := p.arrivals.ticks[i], p.arrivals.above[i]
	if k == 0 {
		return interval{}
	}
	per := intervalCalls(p, i, c, smps)
	// The own window, if kept; else an interval that proves nothing, for
	// the longer windows to narrow.
	iv := interval{lo: 0, hi: 1, counts: true}
	if v, n := spreadSample(c.Value, c.Volume, per, above); n > 0 {
		iv = proportionInterval(v, n, p.decisive)
	}
	iv.seenLo, iv.seenHi = c.Value, c.Value
	wins := p.windows[i]
	if len(wins) == 0 || c.Status != StatusOK {
		return iv
	}
	// As withWindows, but only the windows spreadSample keeps prove
	// anything, while the agreement with the shorter windows is on what
	// each observed: leaving a window out is about what it proves, not
	// about whether its failure is still current.
	least, most := c.Value, c.Value
	for _, w := range wins {
		s, counts := windowSample(w, smps)
		if !counts {
			continue
		}
		if sv, sn := spreadSample(s.Value, s.Volume, per, above); sn > 0 {
			wi := proportionInterval(sv, sn, p.decisive)
			if lo := mathMin(wi.lo, least); lo > iv.lo {
				iv.lo, iv.seenLo = lo, mathMin(s.Value, least)
			}
			if hi := mathMax(wi.hi, most); hi < iv.hi {
				iv.hi, iv.seenHi = hi, mathMax(s.Value, most)
			}
		}
		least, most = mathMin(least, s.Value), mathMax(most, s.Value)
	}
	return iv
}

// Arrival is the last tick on which arriving failures demanded a level
// (see "Arriving failures" above): when, and which level.
type Arrival struct {
	At    time.Time
	Level traffic.Level
}

// arrivalRules are what arrivingLevel reads of a policy: each signal's
// ticks per own window (0: the signal is not counted in calls) and
// whether its bounds are failure shares (`above`); and how long an
// arrival is remembered, the shortest counted own window.
type arrivalRules struct {
	ticks  []float64
	above  []bool
	memory time.Duration
}

func newArrivalRules(cfg *rules.Policy, bounds [][]rules.Bound) arrivalRules {
	ar := arrivalRules{ticks: make([]float64, len(cfg.Signals)), above: make([]bool, len(cfg.Signals))}
	step := cfg.Global.EvaluationInterval
	for i, s := range cfg.Signals {
		w := s.Derived.Own
		if s.Volume == "" || w <= 0 || step <= 0 || len(bounds[i]) == 0 {
			continue
		}
		ar.ticks[i] = mathMax(1, float64(w)/float64(step))
		ar.above[i] = bounds[i][0].Below == nil
		if ar.memory == 0 || w < ar.memory {
			ar.memory = w
		}
	}
	return ar
}

// arrivingLevel is the level that the calls of the newest interval alone
// demand at scoring.decisive_confidence, from how each counted signal of
// sc moved since prev (the route's score on the last tick): Normal when
// none, or when prev has no comparable signal.
func arrivingLevel(p *Policy, prev, sc *Score) traffic.Level {
	n := len(p.Config.Signals)
	if len(prev.Contributions) != n || len(sc.Contributions) != n {
		return traffic.Normal
	}
	var buf [intervalsOnStack]interval
	ivs := buf[:0]
	if n > intervalsOnStack {
		ivs = make([]interval, 0, n)
	}
	ivs = ivs[:n]
	any := false
	for i := range n {
		c, pc, k := &sc.Contributions[i], &prev.Contributions[i], p.arrivals.ticks[i]
		ivs[i] = interval{}
		if k == 0 || !c.Counted || !pc.Counted || c.Status != StatusOK || pc.Status != StatusOK ||
			c.Signal != pc.Signal || !(c.Volume > 0) || math.IsNaN(c.Value) || math.IsNaN(pc.Value) {
			continue
		}
		if fresh := c.Volume - pc.Volume*(1-1/k); fresh < c.Volume/(2*k) {
			// The newest interval brought less than half the calls of
			// an interval: a scrape gap (the window ends earlier, its
			// old failures weigh more) or traffic falling away, not
			// failures arriving.
			continue
		}
		f := k * (c.Value - pc.Value)
		if !p.arrivals.above[i] {
			f++
		}
		f = mathMin(1, mathMax(0, f))
		if !pastAny(p.scoring.bounds[i], f) {
			// Its interval holds f, so its end nearest to health is
			// past no threshold either: judge would skip it.
			continue
		}
		ivs[i] = proportionInterval(f, c.Volume/k, p.decisive)
		any = true
	}
	if !any {
		return traffic.Normal
	}
	scratch := Score{Contributions: sc.Contributions}
	v, imm, fl := judge(p, &scratch, ivs, healthySide, seenSide, false)
	if v >= 100 && fl == traffic.Normal {
		return traffic.Normal
	}
	return max(p.levelForScore(v), imm, fl)
}

// decisiveLevel is the level that decisive evidence moves the route to
// without dwell on this tick: the score's SpreadLevel, or its
// DecisiveLevel as far as arriving failures demanded it now and on an
// earlier tick within the arrival memory (prev.Arrival); arrived says it
// was the latter. It also returns the route's arrival to remember.
func decisiveLevel(p *Policy, prev RouteState, sc Score, now time.Time) (lvl traffic.Level, arrived bool, next Arrival) {
	last := prev.Arrival
	arr := arrivingLevel(p, &prev.Score, &sc)
	if arr == traffic.Normal {
		return sc.SpreadLevel, false, last
	}
	lvl = sc.SpreadLevel
	if !last.At.IsZero() && now.After(last.At) && now.Sub(last.At) <= p.arrivals.memory {
		if a := min(sc.DecisiveLevel, arr, last.Level); a > lvl {
			lvl, arrived = a, true
		}
	}
	return lvl, arrived, Arrival{At: now, Level: arr}
}
