package evaluator

import (
	"math"
	"math/rand/v2"
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
	// No proportion is no evidence, at any number of calls (it used to
	// index the exact table at int(NaN) and panic, and Step with it).
	for _, n := range []float64{1, 40, 100, 5000} {
		if lo, hi := shown.of(math.NaN(), n); lo != 0 || hi != 1 {
			t.Errorf("NaN of %g calls: [%g, %g], want [0, 1]", n, lo, hi)
		}
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

// TestMinMaxAsMath holds wilson, proportionBounds.of and
// proportionInterval, which clamp with Go's min and max, to the same
// functions written with math.Min and math.Max, bit for bit, on edge
// values (NaN, ±Inf, ±0, negative, above 1, tiny and huge counts) and
// random ones, through the table and through Wilson's bounds.
func TestMinMaxAsMath(t *testing.T) {
	wilsonMath := func(p, n, z float64) (lo, hi float64) {
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
	ofMath := func(b *proportionBounds, p, n float64) (lo, hi float64) {
		calls := math.Round(n)
		if !(n > 0) || calls < 1 {
			return 0, 1
		}
		if calls > exactCalls {
			return wilsonMath(p, n, b.z)
		}
		p = math.Min(1, math.Max(0, p))
		x := int(math.Round(p * calls))
		return b.lo[int(calls)][x], b.hi[int(calls)][x]
	}
	// Bit for bit, but any NaN for a NaN: its payload is never read.
	same := func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) || a != a && b != b }
	b := newProportionBounds(zScore(0.999))
	edges := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), -1, 1, 0.5, 1.5, 1e-300, 1e300, 0.0001, 0.9999}
	counts := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, -3, 0.4, 1, 3, 100, 100.4, 101, 1e6, math.MaxFloat64}
	rng := rand.New(rand.NewPCG(7, 8))
	for range 20000 {
		edges = append(edges, rng.Float64()*1.2-0.1)
		counts = append(counts, rng.Float64()*5000)
	}
	for i, p := range edges {
		for _, n := range counts[:min(len(counts), 13+i%50)] {
			for _, z := range []float64{b.z, 0, math.NaN(), math.Inf(1)} {
				lo, hi := wilson(p, n, z)
				wlo, whi := wilsonMath(p, n, z)
				if !same(lo, wlo) || !same(hi, whi) {
					t.Fatalf("wilson(%v, %v, %v) = %v, %v; with math's: %v, %v", p, n, z, lo, hi, wlo, whi)
				}
			}
			if p != p || math.IsInf(p, 0) || p*n > 1e15 {
				continue // the table's index of such a p is not defined
			}
			lo, hi := b.of(p, n)
			wlo, whi := ofMath(b, p, n)
			if !same(lo, wlo) || !same(hi, whi) {
				t.Fatalf("of(%v, %v) = %v, %v; with math's: %v, %v", p, n, lo, hi, wlo, whi)
			}
			iv := proportionInterval(p, n, b)
			if w := (interval{lo: math.Min(wlo, p), hi: math.Max(whi, p), seenLo: p, seenHi: p, counts: true}); !same(iv.lo, w.lo) || !same(iv.hi, w.hi) {
				t.Fatalf("proportionInterval(%v, %v) = %+v; with math's: %+v", p, n, iv, w)
			}
		}
	}
}
