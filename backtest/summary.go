package backtest

import (
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/traffic"
)

// Summary counts what a backtest did: the figures of the report's summary
// and of `backtest --compare`.
type Summary struct {
	// Detected counts routes leaving normal.
	Detected int `json:"detected"`
	// Moves counts changes of a service's split (the initial split is not
	// a move).
	Moves int `json:"moves"`
	// Shed counts moves into shed; FailedOver moves into failover;
	// FailedBack completed failbacks (failover → normal).
	Shed       int `json:"shed"`
	FailedOver int `json:"failed_over"`
	FailedBack int `json:"failed_back"`
	// Pages counts tier A alerts that started firing.
	Pages int `json:"pages"`
	// DegradedMinutes is user-minutes on a degraded route (see
	// UserMinutes), summed over services.
	DegradedMinutes float64 `json:"degraded_minutes"`
}

// Degraded tells whether route was degraded at t: the ground truth of a
// scenario, or, without one, Hermes's own judgement (BelowNormal).
type Degraded func(route string, t time.Time) bool

// UserMinutes is the one definition of "minutes on a degraded route": the
// share of a service's traffic (weights in percent) on routes degraded at
// the tick, times the tick's step. A route at 5 % for a minute counts
// 0.05 minutes: what users felt, not how long a level lasted. The
// detection benchmark (backtest/detect) and the report both use it.
func UserMinutes(step time.Duration, weights map[string]int, degraded func(route string) bool) float64 {
	share := 0
	for route, w := range weights {
		if w > 0 && degraded(route) {
			share += w
		}
	}
	return float64(share) / 100 * step.Minutes()
}

// BelowNormal judges a route degraded while its level is below normal
// and no failback is bringing it back, as the ticks of tl recorded it;
// for history without a ground truth. A route in a failback stage has
// looked recovered for the whole recovery dwell: the share a stage gives
// it is the failback's test of a healthy route, not users on a degraded
// one (a stage that steps back leaves the stage, and counts again).
func BelowNormal(tl *Timeline) Degraded {
	degraded := make(map[time.Time]map[string]bool, len(tl.Ticks))
	for _, tk := range tl.Ticks {
		m := make(map[string]bool, len(tk.Routes))
		for route, rt := range tk.Routes {
			m[route] = rt.Level != traffic.Normal.String() && rt.Stage == 0
		}
		degraded[tk.Time] = m
	}
	return func(route string, t time.Time) bool {
		return degraded[t.UTC()][route]
	}
}

// Summarize reads tl's events and ticks (Options.Ticks); degraded nil
// means BelowNormal(tl).
func Summarize(tl *Timeline, degraded Degraded) Summary {
	if degraded == nil {
		degraded = BelowNormal(tl)
	}
	var s Summary
	seen := map[string]bool{}
	for _, e := range tl.Events {
		switch e.Type {
		case evaluator.EventTraffic:
			if seen[e.Service] {
				s.Moves++
			}
			seen[e.Service] = true
		case evaluator.EventLevel:
			switch {
			case e.From == traffic.Normal.String():
				s.Detected++
			case e.From == traffic.Failover.String() && e.To == traffic.Normal.String():
				s.FailedBack++
			}
			switch e.To {
			case traffic.Shed.String():
				s.Shed++
			case traffic.Failover.String():
				s.FailedOver++
			}
		case evaluator.EventAlert:
			if e.State == "firing" && e.Tier == "A" {
				s.Pages++
			}
		}
	}
	for _, tk := range tl.Ticks {
		for _, split := range tk.Splits {
			s.DegradedMinutes += UserMinutes(tl.Step, split, func(route string) bool { return degraded(route, tk.Time) })
		}
	}
	return s
}
