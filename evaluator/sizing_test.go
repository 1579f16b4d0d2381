package evaluator

import (
	"math"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/rules/config"
)

// binomialPMF is the chance of x failures in n calls failing at share p.
func binomialPMF(n, x int, p float64) float64 {
	lg := func(k int) float64 { v, _ := math.Lgamma(float64(k) + 1); return v }
	return math.Exp(lg(n) - lg(x) - lg(n-x) + float64(x)*math.Log(p) + float64(n-x)*math.Log1p(-p))
}

// TestProvenPenaltyIsSizedAtItsFarEnd: once its calls prove
// hard_fail_ratio past its 1 % threshold at scoring.confidence, the
// penalty is sized at the far end of the calls' interval at
// scoring.recovery_confidence (evidence.go, sizedAt). Over every count of
// failures a route failing at a share the shipped policy scores below 85
// can show in n calls (exact binomial weights, the SPRT's order of calls
// and more), the looks whose bound proves the failure put the score
// below 85 with a chance of at least 95 %; sized on the ratio the calls
// show, a 5 % failure did so on 56-64 % of them (seen failing before the
// change). A healthy route (0.02 %) is never proven at all.
func TestProvenPenaltyIsSizedAtItsFarEnd(t *testing.T) {
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPolicy(cfg.Rules())
	if err != nil {
		t.Fatal(err)
	}
	look := func(x, n int) (proven, below bool) {
		v := float64(x) / float64(n)
		sc := ComputeScore("free", snap(p, time.Unix(0, 0), map[string]any{
			"free.hard_fail_ratio": Sample{Value: v, Volume: float64(n), Counted: true}}), p, false)
		for _, c := range sc.Contributions {
			if c.Signal == "hard_fail_ratio" {
				proven = c.Penalty > 0
			}
		}
		return proven, sc.Value < 85
	}
	// One example: 14 of 300 calls (4.67 %) are proven past 1 % (≥ 2.1 %
	// at 99.9 %) and show a share whose penalty, 14.7 points, would leave
	// the score at 85.3; the calls allow 7.1 % at 95 %, and the route is
	// sized there: below 85 (75.6).
	if proven, below := look(14, 300); !proven || !below {
		t.Errorf("14 of 300 calls: proven %v, below 85 %v; want both", proven, below)
	}
	for _, share := range []float64{0.05, 0.08} {
		for _, n := range []int{154, 300, 900} {
			var provenMass, belowMass float64
			for x := 0; x <= n; x++ {
				w := binomialPMF(n, x, share)
				if w < 1e-12 {
					continue
				}
				if proven, below := look(x, n); proven {
					provenMass += w
					if below {
						belowMass += w
					}
				}
			}
			if got := belowMass / provenMass; got < 0.95 {
				t.Errorf("%g failing, %d calls: below 85 on %.3f of the looks that prove it, want at least 0.95", share, n, got)
			}
		}
	}
	for _, n := range []int{60, 300, 900, 3600} {
		for x := 0; x <= 2; x++ {
			if proven, _ := look(x, n); proven {
				t.Errorf("%d of %d calls (a healthy 0.02 %% shows at most a few): proven past 1 %%", x, n)
			}
		}
	}
}
