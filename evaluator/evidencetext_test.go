package evaluator

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// TestEvidenceTextOnDemand checks the evidence texts that scoring leaves to
// ReasonText: one for every ok counted signal with a count, none made
// otherwise (web/api.TestContributionWire checks them on the wire).
func TestEvidenceTextOnDemand(t *testing.T) {
	p := defaultPolicy(t)
	rng := rand.New(rand.NewPCG(13, 2))
	values := []float64{0, 0.0002, 0.02, 0.25, 0.4, 1, 1.5}
	volumes := []float64{0, 1, 4, 36, 300, 5000}
	for range 400 {
		smps := make([]Sample, len(p.Config.Signals))
		for i := range smps {
			smps[i] = Sample{Value: values[rng.IntN(len(values))], Volume: volumes[rng.IntN(len(volumes))], Counted: rng.IntN(4) > 0}
			if rng.IntN(10) == 0 {
				smps[i] = Sample{Status: StatusError, Reason: "query failed"}
			}
		}
		sc := scoreSamples(p, smps, false, recoveryScope{all: true})
		for i := range sc.Contributions {
			c := &sc.Contributions[i]
			sig := &p.Config.Signals[i]
			text := c.ReasonText()
			switch {
			case c.Status != StatusOK:
				if text != "query failed" {
					t.Fatalf("%s in error: reason %q, want the sample's", c.Signal, text)
				}
			case c.Counted:
				if c.evidence == nil || c.Reason != "" || text == "" {
					t.Fatalf("%s counted: evidence %v, Reason %q, text %q", c.Signal, c.evidence, c.Reason, text)
				}
				unit := " calls" // of users; a probe's are its results
				if !sig.RequiresTraffic {
					unit = " results"
				}
				if sig.Volume != "" && !strings.HasPrefix(text, fmtCount(c.Value*c.Volume)+" of "+fmtCount(c.Volume)+unit) {
					t.Fatalf("%s: text %q for %g of %g%s", c.Signal, text, c.Value, c.Volume, unit)
				}
			default:
				if c.evidence != nil || text != "" {
					t.Fatalf("%s uncounted: evidence %v, text %q", c.Signal, c.evidence, text)
				}
			}
		}
	}
}

func fmtCount(v float64) string { return string(appendFloat(nil, v, 'f', 0)) }
