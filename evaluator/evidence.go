package evaluator

import (
	"math"
	"strconv"
	"time"

	"github.com/hermes-failover/hermes/rules"
)

// Evidence model. A ratio without the count behind it is not evidence: one
// failure in 4 calls and 120 in 300 are both 25 %, but only the second shows
// that a route fails. A signal with a volume is a proportion of calls, and
// the core acts on the one-sided bounds of that proportion at
// scoring.confidence (proportionBounds: exact binomial up to 100 calls,
// Wilson's above): a route moves down only when the bound nearest to health
// is past a threshold, and up only when the bound farthest from it is
// within. At scoring.decisive_confidence the same bounds, from the calls
// alone, skip the dwell. A signal with samples (a latency quantile) counts
// only from scoring.min_samples samples on.
//
// Wilson rather than Wald above 100 calls: it stays inside [0, 1] and keeps
// its coverage at 0 or all failures, where the normal approximation of Wald
// collapses to a zero-width interval, and it is closed-form. At a few calls
// and an extreme confidence it overstates the evidence, so the exact
// (Clopper–Pearson) bounds take over there (bounds.go). A sequential test
// (SPRT, CUSUM) would need per-route memory that a restart loses; the bound
// is recomputed from each tick's window, so Hermes stays stateless.

// zScore is the standard normal quantile of a one-sided confidence c.
func zScore(c float64) float64 { return math.Sqrt2 * math.Erfinv(2*c-1) }

// wilson returns the one-sided Wilson score bounds, at the confidence whose
// normal quantile is z, of a proportion p observed over n trials. p is
// clamped to [0, 1] (a rate per call, such as retries, may exceed 1). With
// no trials it knows nothing: [0, 1].
func wilson(p, n, z float64) (lo, hi float64) {
	if !(n > 0) {
		return 0, 1
	}
	// Go's min and max, not math's: they are compiled inline, and
	// math.Min and math.Max were a fifth of Step. They differ only for
	// ±Inf against NaN, which a finite operand rules out here and in
	// proportionInterval (TestMinMaxAsMath).
	p = min(1, max(0, p))
	z2 := z * z
	den := 1 + z2/n
	mid := (p + z2/(2*n)) / den
	half := z * math.Sqrt(p*(1-p)/n+z2/(4*n*n)) / den
	return max(0, mid-half), min(1, mid+half)
}

// interval is what the data show a signal's value to be: within [lo, hi]
// at the confidence asked for; counts says whether it counts at all.
type interval struct {
	lo, hi float64
	// seenLo and seenHi are the observed ratios behind each end: the
	// value of the window that gave it (see withWindows), so what a
	// penalty is sized on once its end proves a threshold crossed.
	seenLo, seenHi float64
	counts         bool
}

// evidenceInterval is the interval of contribution c of signal sig at the
// confidence of b. A signal without a volume (or one
// whose volume was not measured) is taken at its value; one with samples
// counts only from min_samples on.
func evidenceInterval(p *Policy, sig *rules.SignalConfig, c *Contribution, b *proportionBounds) interval {
	switch {
	case c.Status != StatusOK:
		return interval{}
	case sig.Volume != "" && c.Counted:
		return proportionInterval(c.Value, c.Volume, b)
	case sig.Samples != "" && c.Counted && c.Volume < p.Config.Scoring.MinSamples:
		return interval{lo: c.Value, hi: c.Value, seenLo: c.Value, seenHi: c.Value}
	}
	return interval{lo: c.Value, hi: c.Value, seenLo: c.Value, seenHi: c.Value, counts: true}
}

// proportionInterval is the interval of a proportion v of n calls at the
// confidence of b (exact at a few calls, Wilson's above), never further
// from the value than it is.
func proportionInterval(v, n float64, b *proportionBounds) interval {
	lo, hi := b.of(v, n)
	return interval{lo: min(lo, v), hi: max(hi, v), seenLo: v, seenHi: v, counts: true}
}

// Evidence over longer windows. A signal with windows (rules.SignalConfig
// Windows) also has its calls counted over each longer window, in the same
// query. A window of 15m holds fifteen times the calls of one of 1m, so a
// failback stage at 2 req/s, or a 15 % failure at 0.3 req/s, is proven
// there long before any single minute proves it. But a long window also
// remembers: a failure that ended ten minutes ago is still in it. As in
// the SRE workbook's multi-window alerts, a longer window's evidence counts
// only while the shorter windows do not contradict it. Per window w,
// ascending from the signal's own, with v_s the observed ratio and lo_s,
// hi_s the bounds of each shorter window s that has data (the own one
// included):
//
//	lo = max(lo_own, max_w { lo_w : lo_w ≤ min_{s<w} hi_s })
//	hi = min(hi_own, min_w max(hi_w, max_{s<w} v_s))
//
// A down-move's end counts a longer window unless a shorter window's own
// calls prove, at the same confidence, a ratio below what the longer one
// proves: then the failure it remembers has ended, and the window adds
// nothing. A penalty is sized on the window's observed ratio, never past
// what a shorter window allows (min(v_w, min_{s<w} hi_s)). So a route that
// recovered five minutes ago at 0.3 req/s (0 of 90 calls in 5m: ≤ 7.39 %)
// is not held to its 15m window's 15 % (≥ 9.64 %); but a minute of 6 calls
// without a failure (≤ 68 %) does not veto a 5 % failure that its 15m
// window proves, which is what a quiet last minute on thin traffic mostly
// is. The up-moves' end stays with the shorter windows' observed ratios:
// a route failing now has an own ratio that no quiet history can pull its
// upper bound below, so it never looks healthy; and lo ≤ hi still holds,
// since every lo_w is at most its own v_w and the hi_s of each shorter
// window. Before, the down-moves' end also counted a longer window only up
// to the shorter windows' observed ratios, and a minute of 6 calls
// without a failure vetoed every failure of 5 % (2 in 3 such minutes
// hold none). The decisive interval (a move without dwell) keeps that
// stricter rule. A window can only narrow the signal's own interval.
// Hermes stays stateless: every window is recomputed by Prometheus each
// tick, and a restart loses nothing. A window without data, not counted
// or of no calls adds nothing.

// decidingWindows are which of a signal's windows gave each end of its
// interval: an index into its windows, -1 for its own.
type decidingWindows struct{ lo, hi int8 }

// withWindows is own, the interval of a signal of value v over its own
// window of n calls, narrowed by its windows' samples in smps at the
// confidence of b (see "Evidence over longer windows" above), with the
// windows that gave each end. With veto nil, a longer window's lower end
// counts only up to the shorter windows' observed ratios (the decisive
// interval's stricter rule); with veto, unless a shorter window's upper
// bound at veto is below it.
//
// With size, a window that gives an end is sized where sizedAt sizes it,
// not at its observed ratio.
func withWindows(own interval, v, n float64, wins []windowColumn, smps []Sample, b, veto, size *proportionBounds) (interval, decidingWindows) {
	allowed := v
	var at, vetoAt, sizeAt []ends
	for k, w := range wins {
		at, vetoAt, sizeAt = append(at, ends{}), append(vetoAt, ends{}), append(sizeAt, ends{})
		s, counts := windowSample(w, smps)
		if !counts {
			continue
		}
		at[k] = endsOf(b, s.Value, s.Volume)
		if veto != nil {
			vetoAt[k] = endsOf(veto, s.Value, s.Volume)
		}
		if size != nil {
			sizeAt[k] = endsOf(size, s.Value, s.Volume)
		}
	}
	if veto != nil {
		_, allowed = veto.of(v, n)
		allowed = mathMax(allowed, v)
	} else {
		vetoAt = nil
	}
	if size == nil {
		sizeAt = nil
	}
	return withWindowsAt(own, v, allowed, wins, smps, at, vetoAt, sizeAt)
}

// withWindowsAt is withWindows with each window's bounds made: at b in
// at, at veto in vetoAt (nil: no veto) and at size in sizeAt (nil: no
// size), by window index; allowed is the upper end at veto of the
// signal's own window (at least v), or v without a veto. A window past
// smps or without calls reads none of them.
func withWindowsAt(own interval, v, allowed float64, wins []windowColumn, smps []Sample, at, vetoAt, sizeAt []ends) (interval, decidingWindows) {
	iv, d := own, decidingWindows{lo: -1, hi: -1}
	least, most := v, v // of the shorter windows' ratios
	// allowed: the least of the shorter windows' upper bounds at veto
	for k, w := range wins {
		s, counts := windowSample(w, smps)
		if !counts {
			continue
		}
		wi := intervalOf(at[k], s.Value)
		if vetoAt != nil {
			if wi.lo <= allowed && wi.lo > iv.lo {
				up, _ := sizedFrom(s.Value, sizeAt, k)
				iv.lo, iv.seenLo, d.lo = wi.lo, mathMin(up, allowed), int8(k)
			}
		} else if lo := mathMin(wi.lo, allowed); lo > iv.lo {
			up, _ := sizedFrom(s.Value, sizeAt, k)
			iv.lo, iv.seenLo, d.lo = lo, mathMin(up, allowed), int8(k)
		}
		if hi := mathMax(wi.hi, most); hi < iv.hi {
			_, down := sizedFrom(s.Value, sizeAt, k)
			iv.hi, iv.seenHi, d.hi = hi, mathMax(down, most), int8(k)
		}
		least, most = mathMin(least, s.Value), mathMax(most, s.Value)
		if vetoAt != nil {
			allowed = mathMin(allowed, mathMax(vetoAt[k].hi, s.Value))
		} else {
			allowed = least
		}
	}
	return iv, d
}

// sizedFrom is sizedAt of window k's ratio v, whose bounds at size are
// sizeAt[k] (sizeAt nil: no size).
func sizedFrom(v float64, sizeAt []ends, k int) (up, down float64) {
	if sizeAt == nil {
		return v, v
	}
	return mathMax(sizeAt[k].hi, v), mathMin(sizeAt[k].lo, v)
}

// windowBounds are a signal's windows' bounds, by window index, at each
// confidence scoring reads them: each made once per route and tick, not
// once per reading (scoreScratch.counted). A window without calls has
// none.
type windowBounds struct {
	shown, decisive, recovery, size []ends
}

// of makes wb the bounds of windows wins in smps for p: at the decisive
// confidence only with decisive, at the recovery confidence only with
// strict or where p sizes there.
func (wb *windowBounds) of(p *Policy, wins []windowColumn, smps []Sample, strict, decisive bool) {
	n := len(wins)
	if cap(wb.shown) < n {
		wb.shown, wb.decisive, wb.recovery = make([]ends, n), make([]ends, n), make([]ends, n)
	}
	wb.shown, wb.decisive, wb.recovery = wb.shown[:n], wb.decisive[:n], wb.recovery[:n]
	wb.size = nil
	if p.size != nil {
		wb.size = wb.recovery // size is recovery when set (NewPolicy)
	}
	for k, w := range wins {
		s, counts := windowSample(w, smps)
		if !counts {
			continue
		}
		sh := endsOf(p.shown, s.Value, s.Volume)
		wb.shown[k] = sh
		if decisive {
			wb.decisive[k] = endsOf(p.decisive, s.Value, s.Volume)
		}
		if p.size != nil || strict {
			rec := sh
			if p.recovery != p.shown {
				rec = endsOf(p.recovery, s.Value, s.Volume)
			}
			wb.recovery[k] = rec
		}
	}
}

// Sizing by every proving window. The window that gives a proven end
// (withWindows) is the one whose bound is furthest past health, which is
// not the one that knows the share best: at 20 calls/s a minute of 1200
// calls that shows 10.5 % proves more than fifteen minutes of 18,000 that
// show 9 %, and its far end at 95 % (12 %) is three times as far from what
// it shows as theirs (9.35 %). Sized there, a route at 9 % soft failures
// (score 88) went warm whenever its last minute ran high. So once an end
// is proven, the penalty is sized at the nearest to health of the far
// ends of every window that proves the failure on its own (its bound at
// scoring.confidence past the signal's mildest threshold): each of them
// would have sized it, and more calls never size a penalty further from
// what they show. A shorter window caps it always: its calls are the
// latest. A longer one caps it unless the failure has grown: when the
// deciding window's calls show a share further from health than the
// longer window's other (older) calls, by a two-proportion z-test at
// scoring.confidence (grown), the older calls are from before the
// failure grew, and the longer window's share is the past's. A window
// that does not prove the failure on its own (a long one that still
// holds calls from before the onset) caps nothing, and the size never
// comes nearer health than the share a proving window shows, so a proven
// penalty keeps points.
//
// The price is a failure that grows too slowly or on too few calls for
// the test to tell: it is sized on the longer window's share until its
// growth shows, as before the far end was used. That is the direction
// the evidence allows: the calls cannot tell its growth from the noise
// of a steady share, and a steady share near a line must not move.

// windowCalls is a window's observed ratio and its calls.
type windowCalls struct{ v, n float64 }

// callsOf is the observed ratio and calls of window k of wins in smps
// (-1: own), and whether it has data that counts.
func callsOf(k int, own windowCalls, wins []windowColumn, smps []Sample) (windowCalls, bool) {
	if k < 0 {
		return own, true
	}
	s, ok := windowSample(wins[k], smps)
	if !ok {
		return windowCalls{}, false
	}
	return windowCalls{s.Value, s.Volume}, true
}

// windowSample is window w's sample in smps when it counts as evidence:
// read, counted and of some calls. A window past smps (a tick that read
// fewer columns) has none. Every loop over a signal's windows skips the
// others with it, so that all read the same windows.
func windowSample(w windowColumn, smps []Sample) (*Sample, bool) {
	if w.col >= len(smps) {
		return nil, false
	}
	s := &smps[w.col]
	return s, s.Status == StatusOK && s.Counted && s.Volume > 0
}

// sizedByProving is iv, a signal's interval from withWindows with the
// windows d that gave its ends, with each proven end's size capped by
// every other window that proves the failure (see "Sizing by every
// proving window" above): past bounds' mildest upper threshold for the
// lower end, mildest lower one for the upper end. own is the signal's own
// window; b the bounds at scoring.confidence, size those of sizedAt. With
// size nil it is iv.
func sizedByProving(iv interval, d decidingWindows, own windowCalls, wins []windowColumn, smps []Sample, bounds []rules.Bound, b, size *proportionBounds) interval {
	if size == nil || !iv.counts {
		return iv
	}
	above, below := math.Inf(1), math.Inf(-1) // the mildest thresholds
	for _, t := range bounds {
		if t.Above != nil {
			above = mathMin(above, *t.Above)
		}
		if t.Below != nil {
			below = mathMax(below, *t.Below)
		}
	}
	if iv.lo > above {
		iv.seenLo = provingCap(iv.seenLo, int(d.lo), own, wins, smps, b, size, above, false)
	}
	if iv.hi < below {
		iv.seenHi = provingCap(iv.seenHi, int(d.hi), own, wins, smps, b, size, below, true)
	}
	return iv
}

// provingCap is sz, the size of an end that window d proves past
// threshold t (from above, or with lower from below), capped by the far
// end at size's confidence of every other window whose bound at b proves
// it too, a longer one only while d's calls do not prove the failure
// grown past that window's older calls.
func provingCap(sz float64, d int, own windowCalls, wins []windowColumn, smps []Sample, b, size *proportionBounds, t float64, lower bool) float64 {
	dc, ok := callsOf(d, own, wins, smps)
	if !ok {
		return sz
	}
	for k := -1; k < len(wins); k++ {
		c, ok := callsOf(k, own, wins, smps)
		if k == d || !ok {
			continue
		}
		lo, hi := b.of(c.v, c.n)
		if (!lower && !(mathMin(lo, c.v) > t)) || (lower && !(mathMax(hi, c.v) < t)) {
			continue // does not prove the failure on its own
		}
		if k > d && grown(dc, c, b.z, lower) {
			continue // grown since: its share is the past's
		}
		up, down := sizedAt(c.v, c.n, size)
		if lower {
			sz = mathMax(sz, down)
		} else {
			sz = mathMin(sz, up)
		}
	}
	return sz
}

// grown reports whether the calls of a window d prove, at the one-sided
// confidence whose normal quantile is z, a share further from health
// (above; with lower, below) than the other calls of a longer window w
// that holds them: the two-proportion z-test of d against w's older
// calls, with their pooled share. Without older calls, or with none
// failing or all, nothing is proven.
func grown(d, w windowCalls, z float64, lower bool) bool {
	older := w.n - d.n
	if !(older >= 1) {
		return false
	}
	xd := mathMin(1, mathMax(0, d.v)) * d.n
	xo := mathMax(0, mathMin(1, mathMax(0, w.v))*w.n-xd)
	ov := mathMin(1, xo/older)
	pooled := (xd + xo) / w.n
	se := math.Sqrt(pooled * (1 - pooled) * (1/d.n + 1/older))
	if !(se > 0) {
		return false
	}
	diff := (xd/d.n - ov) / se
	if lower {
		diff = -diff
	}
	return diff > z
}

// sizedAt is where a proportion v of n calls is sized once its bound
// proves a threshold crossed (seenSide): up for an upper threshold, down
// for a lower one. With size nil, at v; else at the end of v's interval
// farthest from health at size's confidence, never nearer health than v.
// See "Sizing" at seenSide.
func sizedAt(v, n float64, size *proportionBounds) (up, down float64) {
	if size == nil {
		return v, v
	}
	lo, hi := size.of(v, n)
	return mathMax(hi, v), mathMin(lo, v)
}

// sized is iv, of a proportion v of n calls, with its own window's ends
// sized at sizedAt(v, n, size).
func sized(iv interval, v, n float64, size *proportionBounds) interval {
	if iv.counts {
		iv.seenLo, iv.seenHi = sizedAt(v, n, size)
	}
	return iv
}

// healthySide is the end of iv that is nearest to health for bound b: what
// the data at least show, the value that down-moves are judged on.
func healthySide(iv interval, b rules.Bound) float64 {
	if b.Below != nil {
		return iv.hi
	}
	return iv.lo
}

// seenSide is the share behind healthySide(iv, b) that a penalty is
// sized on once that end proves the bound crossed: the observed ratio of
// the window that gave it, moved to the far end of that window's interval
// at the sizing confidence (sizedAt). The bound decides whether the calls
// show a threshold crossed; by how much is what they still allow, not the
// least they could be. Sized on the bound, a route failing 15 % of 270
// calls at night (≥ 10 % at 99.9 %) would cost 15 points against the 5 %
// threshold, where its calls show 30.
//
// Sizing. Why the far end at scoring.recovery_confidence rather than the
// ratio shown: a share the policy scores just below a level's line (5 %
// of 503s, 16 points, score 84) shows a ratio under the line on about
// half the looks, and each such look restarts the dwell. Sized at the
// far end at 95 %, a look that proves the failure sizes it above the
// line only when the calls' 95 % bound falls below the true share: at
// most 5 % of such looks (the bound's coverage). The price is a route
// proven past its threshold at a share scored just above the line (2-4 %
// of 503s): it moves while its calls cannot rule the line out at 95 %.
// docs/detection.md ("Hard failures at small shares on thin traffic")
// gives the per-look rates and the candidates weighed against it.
func seenSide(iv interval, b rules.Bound) float64 {
	if b.Below != nil {
		return iv.seenHi
	}
	return iv.seenLo
}

// sickSide is the end of iv that is farthest from health for bound b: what
// the data at most allow, the value that up-moves are judged on.
func sickSide(iv interval, b rules.Bound) float64 {
	if b.Below != nil {
		return iv.lo
	}
	return iv.hi
}

// evidenceFormat is what the evidence texts of one signal of a policy are
// made of besides a contribution's own numbers: made once by NewPolicy and
// shared, by pointer, by that signal's contributions.
type evidenceFormat struct {
	// in says the range of the signal's count (" in 2m", "" when unknown).
	in string
	// samples: the count is of samples, not calls.
	samples    bool
	minSamples float64
	// unit names what a counted signal counts: " calls" of users, or
	// " results" of probes (a signal that needs no user traffic).
	unit string
	// bounds are those at scoring.confidence, confidence its text.
	bounds     *proportionBounds
	confidence string
}

// newEvidenceFormat is the evidence format of signal sig of cfg, whose
// bounds at scoring.confidence are b.
func newEvidenceFormat(cfg *rules.Policy, sig *rules.SignalConfig, b *proportionBounds) evidenceFormat {
	f := evidenceFormat{samples: sig.Samples != "", minSamples: cfg.Scoring.MinSamples,
		bounds: b, confidence: fmtConfidence(cfg.Scoring.Confidence), unit: " calls"}
	if !sig.RequiresTraffic {
		f.unit = " results"
	}
	if w := sig.Derived.Evidence; w > 0 {
		f.in = " in " + fmtWindow(w)
	}
	return f
}

// evidence is what a contribution's evidence text is made of besides its
// own numbers: its signal's format and the longer window that gave the
// text's bound, zero when the signal's own window did. Contributions
// without a window share their signal's, which the policy keeps.
type evidence struct {
	*evidenceFormat
	window windowEvidence
}

// windowEvidence is a longer window of a signal, with its ratio and calls.
type windowEvidence struct {
	window        time.Duration
	value, volume float64
}

// format is the evidence format of c's signal, nil when c's text is its
// Reason.
func (c *Contribution) format() *evidenceFormat {
	if c.evidence == nil {
		return nil
	}
	return c.evidence.evidenceFormat
}

// evidenceKind is which end of a counted proportion's interval its
// evidence text gives: the interval is not kept, but made again from the
// contribution's value and volume when the text is asked for.
type evidenceKind uint8

const (
	evidenceNone    evidenceKind = iota
	evidenceAtLeast              // "≥ lo %": proven past an upper threshold, or within a lower one
	evidenceAtMost               // "≤ hi %"
)

// setEvidence marks c, of the signal whose evidence is e, as one whose
// reason is its evidence text (ReasonText), for a counted ok contribution:
// iv is c's interval at scoring.confidence, above whether the signal's
// thresholds are upper ones, proven whether the interval is past one.
//
// A live fleet's counted signals would give every route a new text every
// tick, though a text is read only when an alert, an event or a person
// asks for it: scoring keeps only the kind of text and the bound it
// gives, and ReasonText writes it.
func (c *Contribution) setEvidence(e *evidence, above, proven bool, iv interval) {
	if c.Status != StatusOK || !c.Counted {
		return
	}
	c.Reason, c.evidence, c.evidenceKind, c.bound = "", e, evidenceAtMost, iv.hi
	if above == proven {
		c.evidenceKind, c.bound = evidenceAtLeast, iv.lo
	}
}

// setWindow records in c, after setEvidence, which of the signal's
// windows wins gave the end of its interval that its text is about (d):
// the lower end when it shows at least, or was not proven past an upper
// threshold; else the upper end. Nothing when the signal's own window did.
// The evidence is appended to ws, made with room for most (a route's
// windowed signals) when nil, so a route's contributions share one
// allocation; it returns ws.
func (c *Contribution) setWindow(wins []windowColumn, smps []Sample, d decidingWindows, ws []evidence, most int) []evidence {
	if c.format() == nil || len(wins) == 0 {
		return ws
	}
	k := d.hi
	if (c.evidenceKind == evidenceAtLeast) != c.Unproven {
		k = d.lo
	}
	if k < 0 {
		return ws
	}
	if ws == nil {
		ws = make([]evidence, 0, most)
	}
	s := &smps[wins[k].col]
	ws = append(ws, evidence{c.evidence.evidenceFormat, windowEvidence{wins[k].window, s.Value, s.Volume}})
	c.evidence = &ws[len(ws)-1]
	return ws
}

// ReasonText is why c has its value: what the data behind a counted
// signal were ("120 of 300 calls in 2m: ≥ 34 % at 99.9 %", "1 of 4 calls
// in 2m: not enough evidence", "36 samples in 2m: not enough evidence
// (fewer than 200)"), else Reason (a sample's error).
func (c *Contribution) ReasonText() string {
	if c.format() == nil {
		return c.Reason
	}
	var buf [128]byte
	return string(c.appendEvidence(buf[:0]))
}

// appendEvidence appends c's evidence text to b. It is written with
// strconv into one buffer (appendFloat: the text of fmt's %.0f, %g and
// %.3g) rather than with fmt, as explain and the status page ask for every
// route's.
func (c *Contribution) appendEvidence(b []byte) []byte {
	f := c.format()
	if f.samples {
		b = appendFloat(b, c.Volume, 'f', 0)
		b = append(b, " samples"...)
		b = append(b, f.in...)
		if c.Volume < f.minSamples {
			b = append(b, ": not enough evidence (fewer than "...)
			b = appendFloat(b, f.minSamples, 'g', -1)
			b = append(b, ')')
		}
		return b
	}
	// The calls of the window that gave the bound: the signal's own, or
	// one of its longer windows.
	value, volume := c.Value, c.Volume
	window, wValue, wVolume := c.Window()
	if window > 0 {
		value, volume = wValue, wVolume
	}
	b = appendFloat(b, value*volume, 'f', 0)
	b = append(b, " of "...)
	b = appendFloat(b, volume, 'f', 0)
	b = append(b, f.unit...)
	if window > 0 {
		b = append(b, " in "...)
		b = appendWindow(b, window)
	} else {
		b = append(b, f.in...)
	}
	if c.Unproven {
		return append(b, ": not enough evidence"...)
	}
	// Proven past: the bound nearest to health; within: the farthest.
	if c.evidenceKind == evidenceAtLeast {
		b = append(b, ": ≥ "...)
	} else {
		b = append(b, ": ≤ "...)
	}
	b = appendFloat(b, c.bound*100, 'g', 3)
	b = append(b, " % at "...)
	return append(b, f.confidence...)
}

// fmtConfidence writes a confidence as a percentage with all its nines:
// 99.9 %, 99.9999 %.
func fmtConfidence(c float64) string {
	return strconv.FormatFloat(math.Round(c*1e8)/1e6, 'f', -1, 64) + " %"
}

// appendWindow appends fmtWindow(d) to b.
func appendWindow(b []byte, d time.Duration) []byte {
	switch {
	case d%time.Hour == 0:
		return append(strconv.AppendInt(b, int64(d/time.Hour), 10), 'h')
	case d%time.Minute == 0:
		return append(strconv.AppendInt(b, int64(d/time.Minute), 10), 'm')
	}
	return append(b, d.String()...)
}

// fmtWindow writes a window as people write it: 2m, 90s, 1h.
func fmtWindow(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return strconv.FormatInt(int64(d/time.Hour), 10) + "h"
	case d%time.Minute == 0:
		return strconv.FormatInt(int64(d/time.Minute), 10) + "m"
	}
	return d.String()
}
