package evaluator

import (
	"math"

	"gonum.org/v1/gonum/mathext"
)

// exactCalls is up to how many calls a proportion's bounds are exact
// binomial ones (Clopper–Pearson), read from a table made with the policy;
// above, they are Wilson's, which agree with them there within a fraction
// of a point.
const exactCalls = 100

// proportionBounds gives the one-sided bounds of a proportion of calls at
// one confidence: exact (Clopper–Pearson) for a count of up to exactCalls
// calls, Wilson's above. At a few calls Wilson's interval, like any normal
// approximation, overstates the evidence at extreme confidences: 3
// failures in 3 calls have an exact binomial tail of 1.25·10⁻⁴ at 5 %, yet
// Wilson's lower bound at 99.9999 % is 12 %; Clopper–Pearson's is 1 %. The
// exact bounds need an inverse incomplete beta (gonum's), which costs a
// microsecond: a fleet at night has many routes with a few calls, so the
// table is computed once per policy, for whole counts (a count from
// increase() is rounded to the call), and a tick only reads it.
type proportionBounds struct {
	z float64
	// lo[n][x], hi[n][x]: the bounds of x failures in n calls.
	lo, hi [][]float64
}

// newProportionBounds is the bounds at the one-sided confidence whose
// normal quantile is z.
func newProportionBounds(z float64) *proportionBounds {
	alpha := 0.5 * math.Erfc(z/math.Sqrt2) // one-sided: 1 − confidence
	b := &proportionBounds{z: z, lo: make([][]float64, exactCalls+1), hi: make([][]float64, exactCalls+1)}
	for n := 1; n <= exactCalls; n++ {
		b.lo[n], b.hi[n] = make([]float64, n+1), make([]float64, n+1)
		for x := 0; x <= n; x++ {
			b.lo[n][x], _ = clopperPearson(float64(x), float64(n), alpha)
		}
		// The upper bound of x failures is 1 − the lower bound of n−x
		// successes: half the inverse betas.
		for x := 0; x <= n; x++ {
			b.hi[n][x] = 1 - b.lo[n][n-x]
		}
	}
	return b
}

// clopperPearson returns the one-sided exact binomial bounds, each at
// confidence 1−alpha, of x successes in n trials: the beta quantiles
// Beta(alpha; x, n−x+1) and Beta(1−alpha; x+1, n−x).
func clopperPearson(x, n, alpha float64) (lo, hi float64) {
	lo, hi = 0, 1
	if x > 0 {
		lo = mathext.InvRegIncBeta(x, n-x+1, alpha)
	}
	if x < n {
		hi = mathext.InvRegIncBeta(x+1, n-x, 1-alpha)
	}
	return lo, hi
}

// of returns the bounds of a proportion p of n calls. p is clamped to
// [0, 1] (a rate per call, such as retries, may exceed 1). With no calls,
// or no proportion (NaN, which the collector reads as missing, so only a
// caller's own snapshot can hold), it knows nothing: [0, 1].
func (b *proportionBounds) of(p, n float64) (lo, hi float64) {
	calls := math.Round(n)
	if !(n > 0) || calls < 1 || math.IsNaN(p) {
		return 0, 1
	}
	if calls > exactCalls {
		return wilson(p, n, b.z)
	}
	p = min(1, max(0, p)) // as math's for a finite bound (see wilson)
	x := int(math.Round(p * calls))
	return b.lo[int(calls)][x], b.hi[int(calls)][x]
}
