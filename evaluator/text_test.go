package evaluator

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

// TestTextIsFmt: each helper of text.go writes what the fmt verb it
// replaces writes, over edge values and random ones, so reasons, errors
// and golden timelines read as they did with fmt.
func TestTextIsFmt(t *testing.T) {
	vals := []float64{0, math.Copysign(0, -1), 1, -1, 0.5, 0.05, 0.000123456, 1e-5, 99.95, 99.949999, 100, 123456, 1e6, 1e20, 1e21, 1e22,
		2.5, 3.5, 0.125, 1.0 / 3, math.NaN(), math.Inf(1), math.Inf(-1), math.MaxFloat64, math.SmallestNonzeroFloat64}
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		vals = append(vals, r.NormFloat64()*math.Pow(10, float64(r.IntN(12)-6)), float64(r.IntN(200000))/1000)
	}
	for _, v := range vals {
		for _, c := range []struct{ got, want string }{
			{gText(v), fmt.Sprintf("%g", v)},
			{gText(v), fmt.Sprintf("%v", v)},
			{fixed(v, 0), fmt.Sprintf("%.0f", v)},
			{fixed(v, 1), fmt.Sprintf("%.1f", v)},
			{digits(v, 2), fmt.Sprintf("%.2g", v)},
			{digits(v, 3), fmt.Sprintf("%.3g", v)},
		} {
			if c.got != c.want {
				t.Errorf("%v: got %q, fmt writes %q", v, c.got, c.want)
			}
		}
	}
	for _, names := range [][]string{nil, {}, {"a"}, {"free", "paid"}, {"a b", ""}} {
		if got, want := listText(names), fmt.Sprintf("%v", names); got != want {
			t.Errorf("listText(%q) = %q, fmt writes %q", names, got, want)
		}
	}
	base := errors.New("base")
	err := wrap("drill", base)
	if want := fmt.Errorf("%s: %w", "drill", base); err.Error() != want.Error() {
		t.Errorf("wrap writes %q, fmt.Errorf %q", err, want)
	}
	if !errors.Is(err, base) {
		t.Errorf("wrap(%q) does not unwrap to its error", err)
	}
}
