package evaluator

import (
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/hermes-failover/hermes/rules"
)

// Evidence model. A ratio without the count behind it is not evidence: one
// failure in 4 calls and 120 in 300 are both 25 %, but only the second shows
// that a route fails. A signal with a volume is a proportion of calls, and
// the core acts on the one-sided Wilson score bounds of that proportion at
// scoring.confidence: a route moves down only when the bound nearest to
// health is past a threshold, and up only when the bound farthest from it is
// within. At scoring.decisive_confidence the same bounds, from the calls
// alone, skip the dwell. A signal with samples (a latency quantile) counts
// only from scoring.min_samples samples on.
//
// Wilson rather than Wald: it stays inside [0, 1] and keeps its coverage at
// 0 or all failures and at a few calls, where the normal approximation of
// Wald collapses to a zero-width interval; rather than Clopper-Pearson it is
// closed-form (no inverse beta) and less conservative. A sequential test
// (SPRT, CUSUM) would need per-route memory that a restart loses; the
// bound is recomputed from each tick's window, so Hermes stays stateless.

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
	p = math.Min(1, math.Max(0, p))
	z2 := z * z
	den := 1 + z2/n
	mid := (p + z2/(2*n)) / den
	half := z * math.Sqrt(p*(1-p)/n+z2/(4*n*n)) / den
	return math.Max(0, mid-half), math.Min(1, mid+half)
}

// interval is what the data show a signal's value to be: within [lo, hi]
// at the confidence asked for; counts says whether it counts at all.
type interval struct {
	lo, hi float64
	counts bool
}

// evidenceInterval is the interval of contribution c of signal sig at the
// confidence whose normal quantile is z. A signal without a volume (or one
// whose volume was not measured) is taken at its value; one with samples
// counts only from min_samples on.
func evidenceInterval(p *Policy, sig *rules.SignalConfig, c *Contribution, z float64) interval {
	switch {
	case c.Status != StatusOK:
		return interval{}
	case sig.Volume != "" && c.Counted:
		lo, hi := wilson(c.Value, c.Volume, z)
		// The bounds of a proportion, never further from the value than it is.
		return interval{lo: math.Min(lo, c.Value), hi: math.Max(hi, c.Value), counts: true}
	case sig.Samples != "" && c.Counted && c.Volume < p.Config.Scoring.MinSamples:
		return interval{lo: c.Value, hi: c.Value}
	}
	return interval{lo: c.Value, hi: c.Value, counts: true}
}

// healthySide is the end of iv that is nearest to health for bound b: what
// the data at least show, the value that down-moves are judged on.
func healthySide(iv interval, b rules.Bound) float64 {
	if b.Below != nil {
		return iv.hi
	}
	return iv.lo
}

// sickSide is the end of iv that is farthest from health for bound b: what
// the data at most allow, the value that up-moves are judged on.
func sickSide(iv interval, b rules.Bound) float64 {
	if b.Below != nil {
		return iv.lo
	}
	return iv.hi
}

// evidenceText says what the data behind c were, for events, explain,
// alerts and the status page: "120 of 300 calls in 2m: ≥ 34 % at 99.9 %",
// "1 of 4 calls in 2m: not enough evidence", "36 samples in 2m: not enough
// evidence (fewer than 200)". sig is p.Config.Signals[i]; iv is c's
// interval at scoring.confidence, above whether the signal's thresholds
// are upper ones, past whether the value is past one and proven whether
// the interval is too. Empty for signals without a count.
//
// A live fleet's counted signals give every route a new text every tick,
// so it is written with strconv into one buffer (appendFloat: the text of
// fmt's %.0f, %g and %.3g) rather than with fmt, and the window and the
// confidence come ready from NewPolicy.
func evidenceText(p *Policy, i int, sig *rules.SignalConfig, c *Contribution, iv interval, above, past, proven bool) string {
	if c.Status != StatusOK || !c.Counted {
		return ""
	}
	var buf [128]byte
	b := buf[:0]
	if sig.Samples != "" {
		b = appendFloat(b, c.Volume, 'f', 0)
		b = append(b, " samples"...)
		b = append(b, p.evidenceIn[i]...)
		if c.Volume < p.Config.Scoring.MinSamples {
			b = append(b, ": not enough evidence (fewer than "...)
			b = appendFloat(b, p.Config.Scoring.MinSamples, 'g', -1)
			b = append(b, ')')
		}
		return string(b)
	}
	b = appendFloat(b, c.Value*c.Volume, 'f', 0)
	b = append(b, " of "...)
	b = appendFloat(b, c.Volume, 'f', 0)
	b = append(b, " calls"...)
	b = append(b, p.evidenceIn[i]...)
	if past && !proven {
		return string(append(b, ": not enough evidence"...))
	}
	// Proven past: the bound nearest to health; within: the farthest.
	if above == proven {
		b = append(b, ": ≥ "...)
		b = appendFloat(b, iv.lo*100, 'g', 3)
	} else {
		b = append(b, ": ≤ "...)
		b = appendFloat(b, iv.hi*100, 'g', 3)
	}
	b = append(b, " % at "...)
	b = append(b, p.confidenceText...)
	return string(b)
}

// fmtConfidence writes a confidence as a percentage with all its nines:
// 99.9 %, 99.9999 %.
func fmtConfidence(c float64) string {
	return strconv.FormatFloat(math.Round(c*1e8)/1e6, 'f', -1, 64) + " %"
}

// fmtWindow writes a window as people write it: 2m, 90s, 1h.
func fmtWindow(d time.Duration) string {
	switch {
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}
