package evaluator

import (
	"cmp"
	"math"
	"slices"
	"time"

	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/traffic"
)

// Contribution is what one signal did to a route's score at one tick:
// what moved the route (the signal and its value), by how much (the
// points it took off, the cap and the floor it imposed, or that it holds
// the route unproven) and on what evidence (whether there was a sample,
// the calls or samples behind the value, the window and the bound its
// text gives). It has one representation: the shell writes it on the
// wire (web/api.Contribution). A route's score holds one per signal, and
// a fleet's state one per route and signal, so it is kept small (112
// bytes: the effect's and the evidence's flags share one word).
type Contribution struct {
	// What moved the route: the signal and its value. AlertValue is what
	// alert expressions see as signals.NAME: the lower confidence bound
	// of a counted proportion (the share the calls show at least), NaN
	// for a statistic of too few samples, else Value.
	Signal     string
	Value      float64
	AlertValue float64

	// By how much. Penalty is the points this signal took off; CapsAt the
	// score cap it imposes, or -1; Floor the level it forces at least,
	// normal when none.
	Penalty float64
	CapsAt  float64
	Floor   traffic.Level
	// Unproven: Value is past a threshold but its count does not show it
	// at scoring.confidence; the signal holds the route (ReasonText says
	// why).
	Unproven bool

	// On what evidence. Status says whether the signal had a sample;
	// Idle that it needs user traffic and the route gets none; Counted
	// that Volume is the count behind Value (calls or samples). Reason is
	// why the signal has no value (a sample's error); ReasonText is what
	// to show.
	//
	// evidenceKind, evidence and bound make ReasonText the evidence text
	// of a counted signal, written only when asked for (evidence.go):
	// evidenceKind says which end of the interval the text gives, bound
	// is that end, and evidence the signal's text format and the longer
	// window that gave the bound, if one did (see Window).
	Status       SampleStatus
	Idle         bool
	Counted      bool
	evidenceKind evidenceKind
	Volume       float64
	Reason       string
	evidence     *evidence
	bound        float64
	// sizedAt is the share Penalty was sized at (evidence.go, seenSide):
	// the far end of a proven interval, or a longer window's ratio, which
	// the reason names when it reads otherwise than Value.
	sizedAt float64
}

// Window is the longer window of the signal whose calls gave the bound
// c's evidence text is about (evidence.go, "Evidence over longer
// windows"), with that window's ratio and calls; zero when the signal's
// own window did.
func (c *Contribution) Window() (window time.Duration, value, volume float64) {
	if c.evidence == nil {
		return 0, 0, 0
	}
	w := &c.evidence.window
	return w.window, w.value, w.volume
}

// Score is a route's health at one tick, with its per-signal contributions.
type Score struct {
	// Value is the score the data allow at best (each signal at the end of
	// its confidence interval nearest to health): down-moves read it.
	Value float64 `json:"value"`
	// Low is the score the data show at least, what up-moves read: the
	// route's causes (and, without user traffic, its probes) at the end
	// of their interval farthest from health at
	// scoring.recovery_confidence, every other signal where Value takes
	// it (recovery.go). Never above Value.
	Low float64 `json:"low"`
	// LowFloor is the strongest floor at the end farthest from health.
	LowFloor traffic.Level `json:"-"`
	// DecisiveLevel is the level that the counted calls alone demand at
	// scoring.decisive_confidence: entered without dwell where no single
	// scrape interval can hold the failures (SpreadLevel) or they arrived
	// on two ticks (arrival.go). Normal when none.
	DecisiveLevel traffic.Level `json:"decisive_level,omitempty"`
	// SpreadLevel is what of DecisiveLevel the windows demand whose
	// failures outnumber one scrape interval's calls: failures no single
	// interval can hold (arrival.go). Entered without dwell.
	SpreadLevel   traffic.Level  `json:"-"`
	Contributions []Contribution `json:"contributions"`
	// Missing lists signals whose absence holds the route's level.
	Missing []string `json:"missing,omitempty"`
	// Floor is the strongest level forced by a floor rule.
	Floor traffic.Level `json:"floor"`
	// ImmediateLevel is the level that an immediate cap or floor demands
	// without dwell, normal when none.
	ImmediateLevel traffic.Level `json:"immediate_level"`
	// suggestedBy is how far below Value the score the data suggest is
	// (Suggested), 0 when it is Value.
	suggestedBy float64
	// burstBy is how far above Value the score is without the proofs a
	// past burst alone gives (Proven), 0 when none.
	burstBy float64
	// Carried: signals were missing, so Value is the last score computed
	// with full data (see Step), not one computed from partial data. A
	// held score that is not Carried was never judged with full data.
	Carried bool `json:"carried,omitempty"`
}

// Suggested is the score the data suggest: as Value, with the bounds of
// the users' counted calls taken at scoring.recovery_confidence rather
// than scoring.confidence, from the windows whose failures no single
// evaluation interval can hold and that bring a call an interval at
// least (suggestedInterval); never above Value. A level's dwell runs
// from when it is suggested; the move needs Value, the proof, on its
// tick (decide.go, updateBelow).
func (s Score) Suggested() float64 { return s.Value - s.suggestedBy }

// Proven is the score a dwell's last tick reads: Value, without the
// proof of any signal that rests only on a longer window whose failures
// one evaluation interval could hold while its own window shows none (a
// burst that has left the own window but not the longer one; see
// pastBurst). A burst in a window longer than the dwell would otherwise
// outlast the dwell that is there to tell it from an outage.
func (s Score) Proven() float64 { return s.Value + s.burstBy }

// Held reports whether missing data freezes the route's level upward.
func (s Score) Held() bool { return len(s.Missing) > 0 }

// Reasons explains the score: every penalty, cap, floor and missing signal.
func (s Score) Reasons() []string {
	var out []string
	for i := range s.Contributions {
		out = append(out, s.Contributions[i].reasons()...)
	}
	for _, m := range s.Missing {
		out = append(out, m+" missing (level held)")
	}
	return out
}

// Causes are the signals that cost the route its score, what moves it
// down, the heaviest first: floors (the most severe level first), then
// caps (the lowest first), then penalties (the most points first). Pages
// name them (AlertEnv.Causes).
func (s Score) Causes() []string {
	var out []string
	for _, c := range s.causeContributions() {
		out = append(out, c.reasons()...)
	}
	return out
}

// causeContributions are the contributions that cost the score, in the
// order of Causes.
func (s Score) causeContributions() []*Contribution {
	var cs []*Contribution
	for i := range s.Contributions {
		if c := &s.Contributions[i]; c.Status == StatusOK && (c.Penalty > 0 || c.CapsAt >= 0 || c.Floor > traffic.Normal) {
			cs = append(cs, c)
		}
	}
	slices.SortStableFunc(cs, func(a, b *Contribution) int {
		if a.Floor != b.Floor {
			return cmp.Compare(b.Floor, a.Floor)
		}
		if ac, bc := capOrder(a), capOrder(b); ac != bc {
			return cmp.Compare(ac, bc)
		}
		return cmp.Compare(b.Penalty, a.Penalty)
	})
	return cs
}

// capOrder ranks a contribution by the cap it imposes, lowest first; one
// without a cap last.
func capOrder(c *Contribution) float64 {
	if c.CapsAt < 0 {
		return math.Inf(1)
	}
	return c.CapsAt
}

// reasons are what c says of the score: its penalty, cap, floor, or that
// it holds the route without proof.
func (c *Contribution) reasons() []string {
	if c.Status != StatusOK {
		return nil
	}
	var out []string
	ev := ""
	if t := c.ReasonText(); c.Counted && t != "" {
		ev = ": " + t
	}
	if c.Penalty > 0 {
		sized := ""
		if v := fmtValue(c.sizedAt); c.sizedAt > 0 && v != fmtValue(c.Value) {
			sized = ", sized at " + v
		}
		out = append(out, c.Signal+" "+fmtValue(c.Value)+" (-"+fixed(c.Penalty, 1)+sized+")"+ev)
	}
	if c.CapsAt >= 0 {
		out = append(out, c.Signal+" "+fmtValue(c.Value)+" caps score at "+gText(c.CapsAt)+ev)
	}
	if c.Floor > traffic.Normal {
		out = append(out, c.Signal+" "+fmtValue(c.Value)+" forces at least "+c.Floor.String()+ev)
	}
	if c.Unproven {
		out = append(out, c.Signal+" "+fmtValue(c.Value)+" held"+ev)
	}
	return out
}

// fmtValue writes a signal's value with three significant digits.
func fmtValue(v float64) string { return digits(v, 3) }

// beyond returns how far v is past the bound, and whether it is past it.
func beyond(b rules.Bound, v float64) (float64, bool) {
	switch {
	case b.Above != nil && v > *b.Above:
		return v - *b.Above, true
	case b.Below != nil && v < *b.Below:
		return *b.Below - v, true
	}
	return 0, false
}

// ComputeScore scores route from snap. idle says the route currently gets no
// user traffic, so signals that need traffic are skipped rather than missing.
// Value judges each signal at the end of its interval nearest to health
// (down-moves), Low as up-moves do for a route whose causes are unknown
// (recovery.go), DecisiveLevel from the counted calls alone at
// scoring.decisive_confidence (see evidence.go).
func ComputeScore(route string, snap Snapshot, p *Policy, idle bool) Score {
	var buf [intervalsOnStack]Sample
	return scoreSamples(p, rowSamples(p, snap.Row(route), buf[:0]), idle, recoveryScope{all: true})
}

// rowSamples appends to smps the sample of each column of p from row, in
// its order: p.Config.Signals, then their windows.
func rowSamples(p *Policy, row Row, smps []Sample) []Sample {
	for _, col := range p.columns {
		smps = append(smps, row.Get(col))
	}
	return smps
}

// scoreSamples is ComputeScore of a route's samples, one per column of p
// in its order: p.Config.Signals, then their windows. Window samples past
// the end of smps are no further evidence.
func scoreSamples(p *Policy, smps []Sample, idle bool, scope recoveryScope) Score {
	var w scoreScratch
	return w.score(p, smps, idle, scope)
}

// scoreScratch is what scoring a route works in: each signal's intervals
// and a signal's windows' bounds. Step scores every route in one, so a
// tick makes them once (routeSamples), not per route; every entry is
// written before it is read.
type scoreScratch struct {
	shown, decisive, low, suggested []interval
	decided                         []decidingWindows
	// suggests: a signal's suggested interval differs from its shown
	// one (counted), so the route's Suggested is judged.
	suggests bool
	// at are the current signal's windows' bounds (windowBounds).
	at windowBounds
}

// ends is a proportion's bounds at one confidence (proportionBounds.of).
type ends struct{ lo, hi float64 }

// endsOf is b.of(v, n) as ends.
func endsOf(b *proportionBounds, v, n float64) ends {
	lo, hi := b.of(v, n)
	return ends{lo, hi}
}

// grow makes w's slices hold n signals.
func (w *scoreScratch) grow(n int) {
	if cap(w.shown) < n {
		w.shown, w.decisive, w.low, w.suggested = make([]interval, n), make([]interval, n), make([]interval, n), make([]interval, n)
		w.decided = make([]decidingWindows, n)
	}
	w.shown, w.decisive, w.low, w.suggested, w.decided = w.shown[:n], w.decisive[:n], w.low[:n], w.suggested[:n], w.decided[:n]
	w.suggests = false
}

// score is scoreSamples in w.
func (w *scoreScratch) score(p *Policy, smps []Sample, idle bool, scope recoveryScope) Score {
	n := len(p.Config.Signals)
	sc := Score{Value: 100, Contributions: make([]Contribution, n)}
	for i := range p.Config.Signals {
		sig, smp, c := &p.Config.Signals[i], &smps[i], &sc.Contributions[i]
		// Field by field into the zeroed slice: a composite literal
		// wrote all 112 bytes again, zeros included.
		c.Signal, c.Value, c.Status, c.CapsAt, c.Volume = sig.Name, smp.Value, smp.Status, -1, smp.Volume
		c.Counted = smp.Counted && (sig.Volume != "" || sig.Samples != "") // sig.EvidenceQuery() != "", without copying sig
		if smp.Reason != "" {
			c.Reason = smp.Reason
		}
		if smp.Status != StatusOK {
			c.Value = math.NaN()
			switch {
			case sig.RequiresTraffic && (idle || smp.noCalls()):
				// No user traffic, whether the plan gives the route none or
				// its callers sent none: the probes judge it alone.
				c.Idle = true
			case sig.Missing != rules.MissingIgnore:
				sc.Missing = append(sc.Missing, sig.Name)
			}
		}
	}
	// A route the plan gives a share whose callers sent none is judged by
	// its probes alone (c.Idle above), and so held to what a route without
	// a share is held to (recovery.go): a failback stage at night passes
	// only on probes that would have shown the failure that moved it.
	byProbes := idle || callersSentNone(p, &sc)
	w.grow(n)
	shown, decisive, low, decided := w.shown, w.decisive, w.low, w.decided
	for i := range p.Config.Signals {
		sig, c := &p.Config.Signals[i], &sc.Contributions[i]
		decided[i] = decidingWindows{lo: -1, hi: -1}
		decisive[i] = interval{}
		strict, share := scope.rules(sig, byProbes)
		if sig.Volume != "" && c.Counted {
			w.counted(p, i, c, smps, strict)
		} else {
			shown[i] = evidenceInterval(p, sig, c, p.shown)
			w.suggested[i] = shown[i]
			if strict {
				low[i] = shown[i]
			}
		}
		if !strict || rulesOut(low[i], p.scoring.bounds[i], share) {
			// Not held to its far end, or it has ruled out the failure
			// that moved the route (recovery.go): only what it shows.
			low[i] = nearEnd(shown[i], p.scoring.bounds[i])
		}
	}
	sc.Value, sc.ImmediateLevel, sc.Floor = judge(p, &sc, shown, healthySide, seenSide, true)
	if w.suggests {
		v, _, _ := judge(p, &sc, w.suggested, healthySide, seenSide, false)
		sc.suggestedBy = mathMax(0, sc.Value-v)
	}
	if p.levelForScore(sc.Value) > traffic.Normal {
		sc.burstBy = w.pastBursts(p, &sc, smps)
	}
	sc.Low, _, sc.LowFloor = judge(p, &sc, low, sickSide, sickSide, false)
	// The score the data show at least is no better than the one they
	// allow at most: a signal judged at its near end is sized there,
	// where Value sizes it on what its calls show.
	sc.Low, sc.LowFloor = mathMin(sc.Low, sc.Value), max(sc.LowFloor, sc.Floor)
	if v, imm, fl := judge(p, &sc, decisive, healthySide, seenSide, false); v < 100 || fl > traffic.Normal {
		sc.DecisiveLevel = max(p.levelForScore(v), imm, fl)
		// The spread reading only narrows a decisive level: made only
		// when there is one. low's intervals are judged; it holds them.
		spread := low
		for i := range p.Config.Signals {
			sig, c := &p.Config.Signals[i], &sc.Contributions[i]
			spread[i] = interval{}
			if sig.Volume != "" && c.Counted && c.Status == StatusOK {
				spread[i] = spreadInterval(p, i, c, smps)
			}
		}
		if v, imm, fl := judge(p, &sc, spread, healthySide, seenSide, false); v < 100 || fl > traffic.Normal {
			sc.SpreadLevel = min(sc.DecisiveLevel, max(p.levelForScore(v), imm, fl))
		}
	}
	var windowed []evidence // the contributions' evidence with a window, made once per route
	for i := range p.Config.Signals {
		sig, c := &p.Config.Signals[i], &sc.Contributions[i]
		if c.Status != StatusOK {
			continue
		}
		above, past, proven := true, false, false
		for j, b := range p.scoring.bounds[i] {
			if j == 0 {
				above = b.Below == nil
			}
			_, p1 := beyond(b, c.Value)
			_, p2 := beyond(b, healthySide(shown[i], b))
			past = past || p1
			proven = proven || (p2 && shown[i].counts)
		}
		c.Unproven = past && !proven
		c.setEvidence(&p.evidence[i], above, proven, shown[i])
		windowed = c.setWindow(p.windows[i], smps, decided[i], windowed, p.windowed)
		c.AlertValue = c.Value
		switch {
		case !shown[i].counts:
			c.AlertValue = math.NaN()
		case sig.Volume != "" && c.Counted:
			c.AlertValue = shown[i].lo
		}
	}
	return sc
}

// counted sets w's intervals of signal i of p, a proportion of calls
// counted in c, from its own window and its windows' samples in smps:
// each proportion's bounds at each confidence made once.
func (w *scoreScratch) counted(p *Policy, i int, c *Contribution, smps []Sample, strict bool) {
	if c.Status != StatusOK {
		w.shown[i], w.low[i], w.suggested[i] = interval{}, interval{}, interval{}
		return
	}
	v, n := c.Value, c.Volume
	own := endsOf(p.shown, v, n)
	shown := intervalOf(own, v)
	if p.size != nil {
		sz := own
		if p.size != p.shown {
			sz = endsOf(p.size, v, n)
		}
		shown.seenLo, shown.seenHi = mathMax(sz.hi, v), mathMin(sz.lo, v)
	}
	// The decisive interval holds v whatever its windows show
	// (withWindowsAt's lower end only rises to a shorter window's ratio
	// with veto nil, its upper end only falls to one), so its end nearest
	// to health is past a threshold only if v is: else it is left out,
	// which judge reads alike.
	var decisive interval
	decides := pastAny(p.scoring.bounds[i], v)
	if decides {
		decisive = intervalOf(endsOf(p.decisive, v, n), v)
	}
	var low interval
	if strict {
		low = intervalOf(endsOf(p.recovery, v, n), v)
	}
	wins := p.windows[i]
	suggests := p.size != nil && p.recovery != p.shown && p.Config.Signals[i].RequiresTraffic && ratiosPast(p.scoring.bounds[i], v, wins, smps)
	if len(wins) > 0 {
		at := &w.at
		at.of(p, wins, smps, strict || suggests, decides)
		var d decidingWindows
		shown, d = withWindowsAt(shown, v, mathMax(own.hi, v), wins, smps, at.shown, at.shown, at.size)
		shown = sizedByProving(shown, d, windowCalls{v, n}, wins, smps, p.scoring.bounds[i], p.shown, p.size)
		w.decided[i] = d
		if decides {
			decisive, _ = withWindowsAt(decisive, v, v, wins, smps, at.decisive, nil, nil)
		}
		if strict {
			low, _ = withWindowsAt(low, v, v, wins, smps, at.recovery, nil, nil)
		}
	}
	suggested := shown
	if suggests {
		suggested, suggests = suggestedInterval(p, i, c, smps, w.at.recovery)
		if !suggests {
			suggested = shown
		}
	}
	w.suggests = w.suggests || suggests
	w.shown[i], w.decisive[i], w.low[i], w.suggested[i] = shown, decisive, low, suggested
}

// suggestedInterval is signal i's suggested interval (Score.Suggested),
// a proportion of users' calls: as withWindows at
// scoring.recovery_confidence, sized there, from the windows whose
// failures no single evaluation interval can hold (spreadSample) and that
// bring at least one call an interval, so that a burst does not start a
// dwell's clock and every look of it reads new calls. rec are the
// windows' bounds at that confidence (windowBounds); ok is false when no
// window counts. Probe results are not suggested: they come on the
// probe's schedule, not the users', at most one a look (readiness every
// 15 s, end-to-end every 2 minutes one in eight), too few for the looks
// of a dwell to renew a suggestion.
func suggestedInterval(p *Policy, i int, c *Contribution, smps []Sample, rec []ends) (iv interval, ok bool) {
	above, wins := p.arrivals.above[i], p.windows[i]
	per := intervalCalls(p, i, c, smps)
	if !(per >= 1) {
		return interval{}, false
	}
	v := c.Value
	own := endsOf(p.recovery, v, c.Volume)
	allowed := mathMax(own.hi, v)
	iv = interval{lo: 0, hi: 1, seenLo: v, seenHi: v, counts: true}
	if _, n := spreadSample(v, c.Volume, per, above); n > 0 {
		iv = intervalOf(own, v)
		iv.seenLo, iv.seenHi = sizedAt(v, c.Volume, p.size)
		ok = true
	}
	most := v
	for j, w := range wins {
		s, counts := windowSample(w, smps)
		if !counts {
			continue
		}
		if _, n := spreadSample(s.Value, s.Volume, per, above); n > 0 {
			ok = true
			wi := intervalOf(rec[j], s.Value)
			up, down := sizedAt(s.Value, s.Volume, p.size)
			if wi.lo <= allowed && wi.lo > iv.lo {
				iv.lo, iv.seenLo = wi.lo, mathMin(up, allowed)
			}
			if hi := mathMax(wi.hi, most); hi < iv.hi {
				iv.hi, iv.seenHi = hi, mathMax(down, most)
			}
		}
		most = mathMax(most, s.Value)
		allowed = mathMin(allowed, mathMax(rec[j].hi, s.Value))
	}
	return iv, ok
}

// pastBursts is Score.burstBy of sc, scored in w from smps: how much
// higher the score is with each signal whose proof is a past burst
// (pastBurst) judged on its own window alone.
func (w *scoreScratch) pastBursts(p *Policy, sc *Score, smps []Sample) float64 {
	any := false
	for i := range p.Config.Signals {
		if pastBurst(p, i, &sc.Contributions[i], smps, w.decided[i]) {
			if !any {
				copy(w.suggested, w.shown) // w.suggested is judged already: reuse it
				any = true
			}
			c := &sc.Contributions[i]
			iv := intervalOf(endsOf(p.shown, c.Value, c.Volume), c.Value)
			iv.seenLo, iv.seenHi = sizedAt(c.Value, c.Volume, p.size)
			w.suggested[i] = iv
		}
	}
	if !any {
		return 0
	}
	v, _, _ := judge(p, sc, w.suggested, healthySide, seenSide, false)
	return mathMax(0, v-sc.Value)
}

// pastBurst reports whether the lower end of counted signal i's interval
// (a failure share's proof), given by a longer window d.lo, rests on
// failures one evaluation interval could hold (spreadSample keeps none)
// while the signal's own window holds no failure: a burst that has left
// the own window. A failure that lasts keeps failing in the own window.
func pastBurst(p *Policy, i int, c *Contribution, smps []Sample, d decidingWindows) bool {
	if d.lo < 0 || !c.Counted || c.Status != StatusOK || !p.arrivals.above[i] || p.arrivals.ticks[i] == 0 {
		return false
	}
	if c.Value*c.Volume >= 0.5 {
		return false // failures in the own window
	}
	w := p.windows[i][d.lo]
	if w.col >= len(smps) {
		return false
	}
	s := &smps[w.col]
	_, n := spreadSample(s.Value, s.Volume, intervalCalls(p, i, c, smps), true)
	return n == 0
}

// ratiosPast reports whether v, or the ratio of any of windows wins in
// smps, is past any of bounds bs.
func ratiosPast(bs []rules.Bound, v float64, wins []windowColumn, smps []Sample) bool {
	if pastAny(bs, v) {
		return true
	}
	for _, w := range wins {
		if s, counts := windowSample(w, smps); counts && pastAny(bs, s.Value) {
			return true
		}
	}
	return false
}

// pastAny reports whether v is past any of bounds bs.
func pastAny(bs []rules.Bound, v float64) bool {
	for _, b := range bs {
		if _, past := beyond(b, v); past {
			return true
		}
	}
	return false
}

// intervalOf is proportionInterval of a proportion v whose bounds are e.
func intervalOf(e ends, v float64) interval {
	return interval{lo: min(e.lo, v), hi: max(e.hi, v), seenLo: v, seenHi: v, counts: true}
}

// intervalsOnStack is how many signals' samples ComputeScore, and
// intervals arrivingLevel, keep on the stack.
const intervalsOnStack = 32

// callersSentNone reports whether every signal of p that needs user
// traffic read no calls in sc (Contribution.Idle), with at least one such
// signal.
func callersSentNone(p *Policy, sc *Score) bool {
	if len(sc.Contributions) < len(p.Config.Signals) {
		// A score without its contributions (a state restored from disk,
		// a blind tick's) shows no calls either way.
		return false
	}
	any := false
	for i := range p.Config.Signals {
		if !p.Config.Signals[i].RequiresTraffic {
			continue
		}
		if !sc.Contributions[i].Idle {
			return false
		}
		any = true
	}
	return any
}

// judge scores the route with every signal taken at side(ivs[i], bound):
// penalties, then caps, then floors; a penalty whose side is past its
// bound is sized at size(ivs[i], bound). It returns the score, the level
// an immediate cap or floor demands and the strongest floor. With record
// it writes each signal's penalty, cap and floor into its contribution. A
// signal whose interval does not count is skipped.
func judge(p *Policy, sc *Score, ivs []interval, side, size func(interval, rules.Bound) float64, record bool) (value float64, immediate, floor traffic.Level) {
	penalty := 0.0
	for _, pen := range p.scoring.penalties {
		iv := ivs[pen.signal]
		if !iv.counts {
			continue
		}
		if _, past := beyond(pen.cfg.Bound, side(iv, pen.cfg.Bound)); past {
			at := size(iv, pen.cfg.Bound)
			d, _ := beyond(pen.cfg.Bound, at)
			pts := mathMin(d*pen.cfg.PointsPerUnit, pen.cfg.Max)
			penalty += pts
			if record {
				c := &sc.Contributions[pen.signal]
				c.Penalty += pts
				c.sizedAt = at
			}
		}
	}
	value = mathMax(0, 100-penalty)
	for _, cp := range p.scoring.caps {
		iv := ivs[cp.signal]
		if !iv.counts {
			continue
		}
		if _, past := beyond(cp.cfg.Bound, side(iv, cp.cfg.Bound)); !past {
			continue
		}
		if c := &sc.Contributions[cp.signal]; record && (c.CapsAt < 0 || cp.cfg.MaxScore < c.CapsAt) {
			c.CapsAt = cp.cfg.MaxScore
		}
		value = mathMin(value, cp.cfg.MaxScore)
		if cp.cfg.Immediate {
			immediate = max(immediate, p.levelForScore(cp.cfg.MaxScore))
		}
	}
	for _, fl := range p.scoring.floors {
		iv := ivs[fl.signal]
		if !iv.counts {
			continue
		}
		if _, past := beyond(fl.cfg.Bound, side(iv, fl.cfg.Bound)); !past {
			continue
		}
		if record {
			c := &sc.Contributions[fl.signal]
			c.Floor = max(c.Floor, fl.level)
		}
		floor = max(floor, fl.level)
		if fl.cfg.Immediate {
			immediate = max(immediate, fl.level)
		}
	}
	return value, immediate, floor
}

// levelForScore is the most severe level whose threshold score is below.
func (p *Policy) levelForScore(score float64) traffic.Level {
	for l := traffic.Failover; l >= traffic.Warm; l-- {
		if score < p.levels[l].Below {
			return l
		}
	}
	return traffic.Normal
}
