package detect

import (
	"math"
	"testing"
	"time"
)

// TestSPRTExpectedCalls against values computed by hand: with α 0.001 and
// β 0.05, A = ln 950 = 6.856462, B = ln(0.05/0.999) = −2.994732, and
// (1−β)A + βB = 6.363902. For p0 5 %, p1 15 %: KL = 0.15 ln 3 +
// 0.85 ln(0.85/0.95) = 0.164792 − 0.094542 = 0.070250, so 90.59 calls. For
// p0 1 %, p1 5 %: KL = 0.05 ln 5 + 0.95 ln(0.95/0.99) = 0.080472 −
// 0.039181 = 0.041291, so 154.12 calls.
func TestSPRTExpectedCalls(t *testing.T) {
	for _, c := range []struct{ p0, p1, want float64 }{{0.05, 0.15, 90.59}, {0.01, 0.05, 154.12}} {
		if got := SPRTExpectedCalls(0.001, 0.05, c.p0, c.p1); math.Abs(got-c.want) > 0.01 {
			t.Errorf("SPRTExpectedCalls(0.001, 0.05, %v, %v) = %.3f, want %.2f", c.p0, c.p1, got, c.want)
		}
	}
	for _, bad := range [][4]float64{{0.001, 0.05, 0.15, 0.05}, {0, 0.05, 0.05, 0.15}, {0.001, 0.05, 0, 0.1}, {0.001, 1, 0.05, 0.15}} {
		if got := SPRTExpectedCalls(bad[0], bad[1], bad[2], bad[3]); !math.IsNaN(got) {
			t.Errorf("SPRTExpectedCalls%v = %v, want NaN", bad, got)
		}
	}
	// The bound at 0.3 req/s for 15 % fallback phrases: 2 × 90.59 / 0.3 s + 1 min.
	b, calls, err := SPRTBound("fallback_phrase", 0.3)
	if err != nil || math.Abs(calls-90.59) > 0.01 || (b-(603926*time.Millisecond+time.Minute)).Abs() > time.Second {
		t.Errorf("SPRTBound(fallback_phrase, 0.3) = %s, %.2f, %v; want 11m4s, 90.59", b, calls, err)
	}
	if _, _, err := SPRTBound("teapot", 1); err == nil {
		t.Error("an unknown kind has a bound")
	}
	if _, _, err := SPRTBound("fallback_phrase", 0); err == nil {
		t.Error("a rate of 0 has a bound")
	}
}

// TestSPRTBoundShare: the bound of another failing share is that share's
// SPRT against the kind's threshold (8 % against 1 %: 64.4 calls, so
// 2 × 64.4 s + 1 min at 1 req/s), the kind's own share gives SPRTBound's,
// and a share at or below the threshold has none.
func TestSPRTBoundShare(t *testing.T) {
	b, calls, err := SPRTBoundShare("503", 0.08, 1)
	want := SPRTExpectedCalls(SPRTAlpha, SPRTBeta, 0.01, 0.08)
	if err != nil || math.Abs(calls-want) > 1e-9 || math.Abs(calls-64.4) > 0.05 || (b-time.Duration((2*want+60)*float64(time.Second))).Abs() > time.Millisecond {
		t.Errorf("SPRTBoundShare(503, 0.08, 1) = %s, %.2f, %v; want %.2f calls", b, calls, err, want)
	}
	b1, c1, err1 := SPRTBound("503", 0.3)
	b2, c2, err2 := SPRTBoundShare("503", 0.05, 0.3)
	if err1 != nil || err2 != nil || b1 != b2 || c1 != c2 {
		t.Errorf("SPRTBound(503, 0.3) = %s, %.2f, %v; SPRTBoundShare at 5 %% = %s, %.2f, %v", b1, c1, err1, b2, c2, err2)
	}
	for _, p1 := range []float64{0.01, 0.005, 1} {
		if _, _, err := SPRTBoundShare("503", p1, 1); err == nil {
			t.Errorf("a share of %v against 503's 1 %% threshold has a bound", p1)
		}
	}
}
