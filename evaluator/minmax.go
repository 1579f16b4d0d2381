package evaluator

import "math"

// mathMax is math.Max(x, y) bit for bit, ±0, ±Inf and NaN included, with
// the usual case (one operand above the other) decided inline. On amd64
// math.Max calls an assembly function the compiler cannot inline, and
// the scoring path calls it a few hundred times per route and tick (it
// was a tenth of Step in a backtest's profile). Go's built-in max is no
// substitute: it differs from math.Max for +Inf against NaN, which a
// sample's value may be. TestMathMinMax holds both to math's.
func mathMax(x, y float64) float64 {
	if x > y {
		return x // neither is NaN, and +Inf is only ever x
	}
	if y > x {
		return y
	}
	return math.Max(x, y) // equal (±0 among them) or a NaN
}

// mathMin is math.Min(x, y) bit for bit, as mathMax is math.Max.
func mathMin(x, y float64) float64 {
	if x < y {
		return x
	}
	if y < x {
		return y
	}
	return math.Min(x, y)
}
