package charts

import (
	"math"

	"github.com/hermes-failover/hermes/evaluator"
)

// CompareNote is the legend's word for the dashed series of a comparison.
const CompareNote = "dashed: candidate"

// CompareSplitChart is a service's split under two policies replayed over
// the same history, on one chart: each route's share as a line, the
// current policy's solid, the candidate's dashed in the same colour.
func CompareSplitChart(service string, routes []string, cur, cand []evaluator.Tick, colors map[string]string) Chart {
	c := Chart{Title: "service " + service + ": split, current vs candidate", Times: tickTimes(cur), YMax: 100, YUnit: "%", DashedNote: CompareNote}
	share := func(ticks []evaluator.Tick, route string) []float64 {
		v := make([]float64, len(cur))
		for i := range v {
			v[i] = math.NaN()
			if i < len(ticks) {
				v[i] = float64(ticks[i].Splits[service][route])
			}
		}
		return v
	}
	for _, route := range routes {
		c.Series = append(c.Series, Series{Name: route, Color: colors[route], Values: share(cur, route)},
			Series{Name: route + " (candidate)", Color: colors[route], Values: share(cand, route), Dashed: true})
	}
	return c
}

// CompareScoreChart is a route's score under both policies on the level
// bands of the current one: solid current, dashed candidate, with each
// policy's level changes marked (the candidate's labelled so).
func CompareScoreChart(route string, cur, cand []evaluator.Tick, bands []Band, curEvents, candEvents []evaluator.Event, color string) Chart {
	c := ScoreChart(route, cur, bands, curEvents, color)
	c.Title = "route " + route + ": score, current vs candidate"
	c.DashedNote = CompareNote
	other := ScoreChart(route, cand, bands, candEvents, color)
	s := other.Series[0]
	s.Name, s.Dashed = route+" (candidate)", true
	if len(s.Values) > len(c.Times) {
		s.Values = s.Values[:len(c.Times)]
	}
	c.Series = append(c.Series, s)
	for _, m := range other.Markers {
		m.Label = "candidate: " + m.Label
		c.Markers = append(c.Markers, m)
	}
	return c
}
