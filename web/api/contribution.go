package api

import (
	"math"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/traffic"
)

// Contribution is evaluator.Contribution on the wire: what one signal did
// to a route's score at the last tick. The core keeps no JSON of its own
// (TestCoreDeps); this is the one wire form, which the status API writes
// and `hermes explain` reads.
type Contribution struct {
	Signal string `json:"signal"`
	// Value is null when the signal has no number (no sample, a failed
	// query): JSON has no NaN.
	Value *float64 `json:"value"`
	// Status is evaluator.SampleStatus in words: ok, missing or error.
	Status string `json:"status"`
	// Reason is evaluator.Contribution.ReasonText: the evidence of a
	// counted signal, or why there is no value.
	Reason   string        `json:"reason,omitempty"`
	Idle     bool          `json:"idle,omitempty"`
	Penalty  float64       `json:"penalty"`
	CapsAt   float64       `json:"caps_at"`
	Floor    traffic.Level `json:"floor"`
	Volume   float64       `json:"volume,omitempty"`
	Counted  bool          `json:"counted,omitempty"`
	Unproven bool          `json:"unproven,omitempty"`
	// Window is the longer window whose calls gave the bound Reason is
	// about, as people write it ("15m"), with that window's ratio and
	// calls (evaluator.Contribution.Window); empty when the signal's own
	// window did.
	Window       string  `json:"window,omitempty"`
	WindowValue  float64 `json:"window_value,omitempty"`
	WindowVolume float64 `json:"window_volume,omitempty"`
}

// ContributionOf is c on the wire.
func ContributionOf(c *evaluator.Contribution) Contribution {
	out := Contribution{Signal: c.Signal, Status: c.Status.String(), Reason: c.ReasonText(), Idle: c.Idle,
		Penalty: c.Penalty, CapsAt: c.CapsAt, Floor: c.Floor, Volume: c.Volume, Counted: c.Counted, Unproven: c.Unproven}
	if !math.IsNaN(c.Value) && !math.IsInf(c.Value, 0) {
		v := c.Value
		out.Value = &v
	}
	if w, v, n := c.Window(); w > 0 {
		out.Window, out.WindowValue, out.WindowVolume = evaluator.WindowText(w), v, n
	}
	return out
}

// ContributionsOf is cs on the wire, in their order (nil for nil, which
// the status API writes as null).
func ContributionsOf(cs []evaluator.Contribution) []Contribution {
	if cs == nil {
		return nil
	}
	out := make([]Contribution, len(cs))
	for i := range cs {
		out[i] = ContributionOf(&cs[i])
	}
	return out
}
