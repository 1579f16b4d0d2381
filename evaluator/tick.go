package evaluator

import (
	"maps"
	"time"
)

// TickRoute is one route at the end of one tick.
type TickRoute struct {
	Score float64 `json:"score"`
	Level string  `json:"level"`
	// Stage is the failback stage, 0 when none.
	Stage int `json:"stage,omitempty"`
}

// Tick is what one tick left: every route's score and level, and every
// service's traffic split (percent by route). Backtests print and draw
// them; the live loop keeps the last ones (package runner/history).
type Tick struct {
	Time   time.Time                 `json:"time"`
	Routes map[string]TickRoute      `json:"routes"`
	Splits map[string]map[string]int `json:"splits"`
}

// TickOf reads the tick at t from the state Step returned for it.
func TickOf(t time.Time, s State) Tick {
	tk := Tick{Time: t.UTC(), Routes: make(map[string]TickRoute, len(s.Routes)), Splits: make(map[string]map[string]int, len(s.Services))}
	for name, rs := range s.Routes {
		tk.Routes[name] = TickRoute{Score: rs.Score.Value, Level: rs.Level.String(), Stage: rs.Stage}
	}
	for name, sp := range s.Services {
		tk.Splits[name] = maps.Clone(sp.Weights)
	}
	return tk
}
