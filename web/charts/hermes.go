package charts

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/traffic"
)

// Threshold is a degraded level's threshold: a score below Below moves a
// route into level Name (after its dwell).
type Threshold struct {
	Name  string
	Below float64
}

// LevelBands are the score ranges of the configured levels, thresholds
// given mildest first: normal above the first, then each level down to the
// next one's threshold.
func LevelBands(thresholds []Threshold) []Band {
	top := 100.0
	name := traffic.Normal.String()
	var out []Band
	for i := 0; i <= len(thresholds); i++ {
		below := 0.0
		if i < len(thresholds) {
			below = thresholds[i].Below
		}
		out = append(out, Band{From: below, To: top, Label: fmt.Sprintf("%s ≥ %g", name, below), Color: LevelColors[name]})
		if i < len(thresholds) {
			top, name = below, thresholds[i].Name
		}
	}
	return out
}

// SplitChart is a service's traffic split over ticks, one stacked area per
// route.
func SplitChart(service string, routes []string, ticks []evaluator.Tick, colors map[string]string) Chart {
	c := Chart{Title: "service " + service + ": traffic split", Times: tickTimes(ticks), YMax: 100, YUnit: "%", Stacked: true}
	for _, route := range routes {
		s := Series{Name: route, Color: colors[route], Values: make([]float64, len(ticks))}
		for i, tk := range ticks {
			s.Values[i] = float64(tk.Splits[service][route])
		}
		c.Series = append(c.Series, s)
	}
	return c
}

// ScoreChart is a route's score over ticks, on the level bands, with its
// level changes and failback stages (in the new level's colour) and alerts
// firing marked. Level changes come from events and, where no event
// covers one (events live in memory, ticks may come from Prometheus and
// reach back past a restart), from the ticks themselves: a change between
// two ticks with no level event of the route in between is marked at the
// later tick.
func ScoreChart(route string, ticks []evaluator.Tick, bands []Band, events []evaluator.Event, color string) Chart {
	s := Series{Name: route, Color: color, Values: make([]float64, len(ticks))}
	for i, tk := range ticks {
		s.Values[i] = math.NaN()
		if rt, ok := tk.Routes[route]; ok {
			s.Values[i] = rt.Score
		}
	}
	c := Chart{Title: "route " + route + ": score", Times: tickTimes(ticks), YMax: 100, Series: []Series{s}, Bands: bands}
	for _, e := range events {
		if e.Route != route {
			continue
		}
		switch {
		case e.Type == evaluator.EventLevel:
			c.Markers = append(c.Markers, Marker{At: e.Time, Label: e.From + " → " + e.To, Color: LevelColors[e.To], Kind: MarkerLevel})
		case e.Type == evaluator.EventFailback && e.Stage != nil && *e.Stage > 0:
			label := fmt.Sprintf("failback stage %d", *e.Stage)
			if e.Percent != nil {
				label += fmt.Sprintf(" (%d%%)", *e.Percent)
			}
			c.Markers = append(c.Markers, Marker{At: e.Time, Label: label, Color: LevelColors[traffic.Warm.String()], Kind: MarkerLevel})
		case e.Type == evaluator.EventAlert && e.State == "firing":
			c.Markers = append(c.Markers, Marker{At: e.Time, Label: e.Name + " firing (tier " + e.Tier + ")", Color: LevelColors["firing"], Kind: MarkerAlert})
		}
	}
	c.Markers = append(c.Markers, tickLevelMarkers(route, ticks, events)...)
	return c
}

// tickLevelMarkers are the level changes of route seen between consecutive
// ticks that no level event of the route between those ticks accounts for.
func tickLevelMarkers(route string, ticks []evaluator.Tick, events []evaluator.Event) []Marker {
	var out []Marker
	prev := ""
	var prevAt time.Time
	for _, tk := range ticks {
		rt, ok := tk.Routes[route]
		if !ok || rt.Level == "" {
			continue
		}
		if prev != "" && rt.Level != prev && !slices.ContainsFunc(events, func(e evaluator.Event) bool {
			return e.Type == evaluator.EventLevel && e.Route == route && e.Time.After(prevAt) && !e.Time.After(tk.Time)
		}) {
			out = append(out, Marker{At: tk.Time, Label: prev + " → " + rt.Level, Color: LevelColors[rt.Level], Kind: MarkerLevel})
		}
		prev, prevAt = rt.Level, tk.Time
	}
	return out
}

// ActuationMarkers are the markers of the actuations on any of services
// (a failure of an actuator that never held a service counts for every
// one): ◆ where an actuator applied a split, ✕ where it failed, the
// actuator, split and result in the tooltip.
func ActuationMarkers(acts []evaluator.Actuation, services ...string) []Marker {
	var out []Marker
	for _, a := range acts {
		if a.Service != "" && !slices.Contains(services, a.Service) {
			continue
		}
		glyph := "◆"
		if a.Result == evaluator.ActuationFailed {
			glyph = "✕"
		}
		out = append(out, Marker{At: a.Time, Label: a.String(), Color: ActuationColors[a.Result], Kind: MarkerActuation, Glyph: glyph})
	}
	return out
}

func tickTimes(ticks []evaluator.Tick) []time.Time {
	out := make([]time.Time, len(ticks))
	for i, tk := range ticks {
		out[i] = tk.Time
	}
	return out
}

// EventLine is one event for people, with its time and reasons.
func EventLine(e evaluator.Event) string {
	at := e.Time.UTC().Format("2006-01-02 15:04:05")
	target := e.Service
	if e.Route != "" {
		target += "/" + e.Route
	}
	switch e.Type {
	case evaluator.EventAlert:
		return fmt.Sprintf("%s  alert %s [%s] %s  %s %s", at, e.Name, e.Tier, e.State, e.Service, e.Route)
	case evaluator.EventFailback:
		stage := 0
		if e.Stage != nil {
			stage = *e.Stage
		}
		return fmt.Sprintf("%s  failback %s/%s stage %d  %v", at, e.Service, e.Route, stage, e.Reasons)
	case evaluator.EventTraffic:
		parts := make([]string, 0, len(e.Weights))
		for _, r := range slices.Sorted(maps.Keys(e.Weights)) {
			parts = append(parts, fmt.Sprintf("%s=%d%%", r, e.Weights[r]))
		}
		return fmt.Sprintf("%s  traffic %s %s", at, e.Service, strings.Join(parts, " "))
	case evaluator.EventOverride, evaluator.EventCommand:
		// An operator's pin or pause: set, cleared, expired, or a command
		// rejected when its tick came.
		line := fmt.Sprintf("%s  %s %s %s %s", at, e.Type, e.Name, target, e.State)
		if e.By != "" {
			line += " by " + e.By
		}
		if e.Expires != nil {
			line += " until " + e.Expires.UTC().Format("2006-01-02 15:04:05")
		}
		return fmt.Sprintf("%s  %v", line, e.Reasons)
	}
	return fmt.Sprintf("%s  level %s/%s %s → %s  %v", at, e.Service, e.Route, e.From, e.To, e.Reasons)
}
