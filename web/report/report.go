// Package report writes the backtest report: one self-contained HTML file
// (inline SVG charts from web/charts, inline CSS, no script, nothing
// fetched) with, for each replayed series, a summary, each service's
// traffic split over time and each route's score over its level
// thresholds with level and alert markers.
package report

import (
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"math"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/evaluator/replay"
	"github.com/hermes-failover/hermes/evaluator/traffic"
	"github.com/hermes-failover/hermes/web/charts"
)

//go:embed report.html
var pageHTML string

var page = template.Must(template.New("report").Parse(pageHTML))

// Replay is one replayed series: its name (a file name), the timeline
// (with ticks) and the policy it ran under.
type Replay struct {
	Name     string
	Timeline *replay.Timeline
	Policy   *evaluator.Policy
}

type section struct {
	Name     string
	Start    string
	End      string
	Step     string
	Summary  Summary
	Services []template.HTML
	Routes   []template.HTML
	Events   []string
}

// Write renders the report of replays to w.
func Write(w io.Writer, replays []Replay) error {
	var data struct {
		Generated string
		Sections  []section
	}
	for _, r := range replays {
		data.Sections = append(data.Sections, build(r))
	}
	if err := page.Execute(w, data); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

func build(r Replay) section {
	tl, pol := r.Timeline, r.Policy
	sec := section{Name: r.Name, Start: tl.Start.UTC().Format(time.RFC3339), End: tl.End.UTC().Format(time.RFC3339),
		Step: tl.Step.String(), Summary: Summarize(tl)}
	times := make([]time.Time, len(tl.Ticks))
	for i, tk := range tl.Ticks {
		times[i] = tk.Time
	}
	colors := charts.RouteColors(pol.Routes())
	for _, svc := range pol.Config.Services {
		c := charts.Chart{Title: "service " + svc.Name + ": traffic split", Times: times, YMax: 100, YUnit: "%", Stacked: true}
		for _, route := range svc.Routes {
			s := charts.Series{Name: route, Color: colors[route], Values: make([]float64, len(tl.Ticks))}
			for i, tk := range tl.Ticks {
				s.Values[i] = float64(tk.Splits[svc.Name][route])
			}
			c.Series = append(c.Series, s)
		}
		sec.Services = append(sec.Services, c.SVG())
	}
	bands := Bands(pol)
	for _, route := range pol.Routes() {
		s := charts.Series{Name: route, Color: colors[route], Values: make([]float64, len(tl.Ticks))}
		for i, tk := range tl.Ticks {
			s.Values[i] = math.NaN()
			if rt, ok := tk.Routes[route]; ok {
				s.Values[i] = rt.Score
			}
		}
		c := charts.Chart{Title: "route " + route + ": score", Times: times, YMax: 100, Series: []charts.Series{s}, Bands: bands}
		for _, e := range tl.Events {
			if e.Route != route {
				continue
			}
			switch {
			case e.Type == evaluator.EventLevel:
				c.Markers = append(c.Markers, charts.Marker{At: e.Time, Label: e.From + " → " + e.To, Color: charts.LevelColors[e.To]})
			case e.Type == evaluator.EventAlert && e.State == "firing":
				c.Markers = append(c.Markers, charts.Marker{At: e.Time, Label: e.Name + " firing (tier " + e.Tier + ")", Color: charts.LevelColors["firing"]})
			}
		}
		sec.Routes = append(sec.Routes, c.SVG())
	}
	for _, e := range tl.Events {
		if e.Type == evaluator.EventLevel || e.Type == evaluator.EventAlert || e.Type == evaluator.EventFailback {
			sec.Events = append(sec.Events, eventLine(e))
		}
	}
	return sec
}

// Bands are the score ranges of the configured levels: normal above warm's
// threshold, then warm, shed and failover below theirs.
func Bands(pol *evaluator.Policy) []charts.Band {
	top := 100.0
	var out []charts.Band
	for _, l := range []traffic.Level{traffic.Normal, traffic.Warm, traffic.Shed, traffic.Failover} {
		below := 0.0
		if l < traffic.Failover {
			below = pol.Level(l + 1).Below
		}
		out = append(out, charts.Band{From: below, To: top, Label: fmt.Sprintf("%s ≥ %g", l, below), Color: charts.LevelColors[l.String()]})
		top = below
	}
	return out
}

func eventLine(e evaluator.Event) string {
	at := e.Time.UTC().Format("2006-01-02 15:04:05")
	switch e.Type {
	case evaluator.EventAlert:
		return fmt.Sprintf("%s  alert %s [%s] %s  %s %s", at, e.Name, e.Tier, e.State, e.Service, e.Route)
	case evaluator.EventFailback:
		stage := 0
		if e.Stage != nil {
			stage = *e.Stage
		}
		return fmt.Sprintf("%s  failback %s/%s stage %d  %v", at, e.Service, e.Route, stage, e.Reasons)
	}
	return fmt.Sprintf("%s  level %s/%s %s → %s  %v", at, e.Service, e.Route, e.From, e.To, e.Reasons)
}
