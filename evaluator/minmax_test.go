package evaluator

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestMathMinMax: mathMax and mathMin are math.Max and math.Min bit for
// bit on every pair of edge values (NaN, ±Inf, ±0, the extremes) and on
// random ones.
func TestMathMinMax(t *testing.T) {
	edges := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), -1, 1, 0.5,
		math.MaxFloat64, -math.MaxFloat64, math.SmallestNonzeroFloat64, -math.SmallestNonzeroFloat64}
	check := func(x, y float64) {
		t.Helper()
		if got, want := mathMax(x, y), math.Max(x, y); math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("mathMax(%g, %g) = %g (%#x), math.Max %g (%#x)", x, y, got, math.Float64bits(got), want, math.Float64bits(want))
		}
		if got, want := mathMin(x, y), math.Min(x, y); math.Float64bits(got) != math.Float64bits(want) {
			t.Errorf("mathMin(%g, %g) = %g (%#x), math.Min %g (%#x)", x, y, got, math.Float64bits(got), want, math.Float64bits(want))
		}
	}
	for _, x := range edges {
		for _, y := range edges {
			check(x, y)
		}
	}
	rng := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		x, y := math.Float64frombits(rng.Uint64()), math.Float64frombits(rng.Uint64())
		check(x, y)
		check(x, x)
		check(rng.Float64(), rng.Float64())
	}
}
