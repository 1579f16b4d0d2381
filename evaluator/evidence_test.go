package evaluator

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestWilson checks the bounds against published Wilson score intervals
// (two-sided 95 % = one-sided 97.5 %) and the edge cases.
func TestWilson(t *testing.T) {
	z := zScore(0.975)
	if math.Abs(z-1.959964) > 1e-5 {
		t.Fatalf("zScore(0.975) = %g, want 1.959964", z)
	}
	for _, c := range []struct {
		p, n, lo, hi float64
	}{
		{0, 10, 0, 0.2775},
		{0.5, 10, 0.2366, 0.7634},
		{0.1, 100, 0.0552, 0.1744},
		{1, 20, 0.8389, 1},
	} {
		lo, hi := wilson(c.p, c.n, z)
		if math.Abs(lo-c.lo) > 5e-4 || math.Abs(hi-c.hi) > 5e-4 {
			t.Errorf("wilson(%g, %g) = [%.4f, %.4f], want [%.4f, %.4f]", c.p, c.n, lo, hi, c.lo, c.hi)
		}
	}
	if lo, hi := wilson(0.3, 0, z); lo != 0 || hi != 1 {
		t.Errorf("no calls: [%g, %g], want [0, 1]", lo, hi)
	}
	if lo, _ := wilson(1.7, 50, z); lo > 1 || lo < 0.9 {
		t.Errorf("a rate above 1 is clamped: lo = %g", lo)
	}
	// More calls at the same share narrow the interval around it.
	lo1, hi1 := wilson(0.25, 4, zScore(0.999))
	lo2, hi2 := wilson(0.25, 400, zScore(0.999))
	if !(lo1 < lo2 && lo2 < 0.25 && 0.25 < hi2 && hi2 < hi1) {
		t.Errorf("1 of 4 [%g, %g] should contain 100 of 400 [%g, %g]", lo1, hi1, lo2, hi2)
	}
}

// TestAppendFloatIsFmt: evidence texts and score breakdowns are written
// with appendFloat where they were written with fmt; the text must be
// fmt's for the verbs they use, on edge values and random ones.
func TestAppendFloatIsFmt(t *testing.T) {
	vals := []float64{0, math.Copysign(0, -1), 0.5, 1.5, 2.5, -2.5, 99.95, 1e6, 123456789, 1e21, 1e-7, 0.000123456,
		math.NaN(), math.Inf(1), math.Inf(-1), math.MaxFloat64, math.SmallestNonzeroFloat64}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		vals = append(vals, rng.Float64()*math.Pow(10, float64(rng.IntN(16)-8)), float64(rng.IntN(100000))*rng.Float64())
	}
	for _, v := range vals {
		for _, f := range []struct {
			verb byte
			prec int
			fmt  string
		}{{'f', 0, "%.0f"}, {'f', 1, "%.1f"}, {'g', -1, "%g"}, {'g', 3, "%.3g"}} {
			if got, want := string(appendFloat(nil, v, f.verb, f.prec)), fmt.Sprintf(f.fmt, v); got != want {
				t.Errorf("appendFloat(%v, %c, %d) = %q, fmt %s gives %q", v, f.verb, f.prec, got, f.fmt, want)
			}
		}
	}
}
