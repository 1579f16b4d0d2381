package report

import (
	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/traffic"
)

// Summary counts what a backtest did, for the top of a report.
type Summary struct {
	// Detected counts routes leaving normal.
	Detected int `json:"detected"`
	// Shed counts moves into shed; FailedOver moves into failover;
	// FailedBack completed failbacks (failover → normal).
	Shed       int `json:"shed"`
	FailedOver int `json:"failed_over"`
	FailedBack int `json:"failed_back"`
	// Pages counts tier A alerts that started firing.
	Pages int `json:"pages"`
	// DegradedMinutes is the time user traffic went to a route below
	// normal, summed over routes: each tick counts its step for every route
	// at warm, shed or in a failback stage that still had a share.
	DegradedMinutes float64 `json:"degraded_minutes"`
}

// Summarize reads tl's events and ticks (backtest.Options.Ticks).
func Summarize(tl *backtest.Timeline) Summary {
	var s Summary
	for _, e := range tl.Events {
		switch e.Type {
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
		for route, rt := range tk.Routes {
			if rt.Level == traffic.Normal.String() {
				continue
			}
			for _, split := range tk.Splits {
				if split[route] > 0 {
					s.DegradedMinutes += tl.Step.Minutes()
					break
				}
			}
		}
	}
	return s
}
