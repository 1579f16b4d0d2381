package evaluator

import (
	"math"
	"testing"
)

// TestProportionBoundsExact checks the exact bounds against their closed
// forms (all or no failures: lo = α^(1/n), hi = 1 − α^(1/n)), the example
// that Wilson's bound overstates (3 of 3 calls at 99.9999 %: 1 %, not
// 12 %), and the definition of the bound at a few points: the binomial
// tail at lo of x or more failures is α.
func TestProportionBoundsExact(t *testing.T) {
	decisive := newProportionBounds(zScore(0.999999))
	if lo, _ := decisive.of(1, 3); math.Abs(lo-0.01) > 1e-9 {
		t.Errorf("3 of 3 calls at 99.9999 %%: lower bound %.6f, want 0.01 (Wilson's is %.3f)", lo, first(wilson(1, 3, decisive.z)))
	}
	shown := newProportionBounds(zScore(0.999))
	alpha := 0.001
	for _, n := range []float64{1, 4, 17, 100} {
		lo, _ := shown.of(1, n)
		_, hi := shown.of(0, n)
		if want := math.Pow(alpha, 1/n); math.Abs(lo-want) > 1e-9 {
			t.Errorf("%g of %g: lower bound %.9f, want %.9f", n, n, lo, want)
		}
		if want := 1 - math.Pow(alpha, 1/n); math.Abs(hi-want) > 1e-9 {
			t.Errorf("0 of %g: upper bound %.9f, want %.9f", n, hi, want)
		}
	}
	for _, c := range []struct{ x, n int }{{1, 4}, {3, 13}, {8, 19}, {40, 90}} {
		lo, _ := shown.of(float64(c.x)/float64(c.n), float64(c.n))
		if tail := binomialTail(c.x, c.n, lo); math.Abs(tail-alpha) > 1e-6 {
			t.Errorf("%d of %d: P(X ≥ %d | p = %.4f) = %.6g, want %g", c.x, c.n, c.x, lo, tail, alpha)
		}
	}
	// Counts from increase() are not whole: they are read to the call.
	if a, b := first(shown.of(0.25, 4.2)), first(shown.of(0.25, 4)); a != b {
		t.Errorf("1.05 of 4.2 calls: %g, want the bound of 1 of 4, %g", a, b)
	}
	if lo, hi := shown.of(0.5, 0.3); lo != 0 || hi != 1 {
		t.Errorf("no whole call: [%g, %g], want [0, 1]", lo, hi)
	}
}

// TestProportionBoundsMeetWilson: above exactCalls the bounds are
// Wilson's. At scoring.confidence's default they are then within two
// points of the exact ones for a share of failures that is neither 0 nor
// all, so the evidence does not jump at the boundary; at 0 or all
// failures, and at the decisive confidence, Wilson is wider or narrower by
// a few points, which is why the exact bounds cover the few calls where
// that matters most.
func TestProportionBoundsMeetWilson(t *testing.T) {
	b := newProportionBounds(zScore(0.999))
	for _, p := range []float64{0.02, 0.15, 0.5} {
		elo, ehi := b.of(p, exactCalls)
		wlo, whi := wilson(p, exactCalls+1, b.z)
		if math.Abs(elo-wlo) > 0.02 || math.Abs(ehi-whi) > 0.02 {
			t.Errorf("p %g: exact [%.4f, %.4f] at %d calls, Wilson [%.4f, %.4f] at %d", p, elo, ehi, exactCalls, wlo, whi, exactCalls+1)
		}
	}
}

// binomialTail is P(X ≥ x) for X ~ Binomial(n, p), summed term by term.
func binomialTail(x, n int, p float64) float64 {
	sum := 0.0
	for k := x; k <= n; k++ {
		lg, _ := math.Lgamma(float64(n + 1))
		lk, _ := math.Lgamma(float64(k + 1))
		lnk, _ := math.Lgamma(float64(n - k + 1))
		sum += math.Exp(lg - lk - lnk + float64(k)*math.Log(p) + float64(n-k)*math.Log1p(-p))
	}
	return sum
}

func first(a, _ float64) float64 { return a }

// TestCallsNeeded: the fewest calls that show x failures within a share,
// by the bounds decisions use: exact up to 100 calls (0 failures within
// 10 % at 99.9 %: 1 − 0.001^(1/n) ≤ 0.1, n ≥ 65.6), Wilson's above
// (z²(1 − t)/t for none failing: 946 for 1 %), more with failures, never
// for a share of 0.
func TestCallsNeeded(t *testing.T) {
	b := newProportionBounds(zScore(0.999))
	for _, c := range []struct{ x, t, want float64 }{{0, 0.1, 66}, {0, 0.01, 946}, {0, 0.05, 182}} {
		if got := callsNeeded(c.x, c.t, b); got != c.want {
			t.Errorf("callsNeeded(%g, %g) = %g, want %g", c.x, c.t, got, c.want)
		}
	}
	if a, b2 := callsNeeded(0, 0.01, b), callsNeeded(3, 0.01, b); b2 <= a {
		t.Errorf("3 failures need %g calls, no failure %g: want more", b2, a)
	}
	if got := callsNeeded(1, 0, b); !math.IsInf(got, 1) {
		t.Errorf("a share of 0 needs %g calls, want never", got)
	}
	// The count found is the first that shows it.
	n := callsNeeded(2, 0.02, b)
	if _, hi := b.of(2/n, n); hi > 0.02 {
		t.Errorf("%g calls do not show 2 failures within 2 %%", n)
	}
	if _, hi := b.of(2/(n-1), n-1); hi <= 0.02 {
		t.Errorf("%g calls already show 2 failures within 2 %%", n-1)
	}
}
