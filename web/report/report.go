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
	"time"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/web/charts"
)

//go:embed report.html
var pageHTML string

var page = template.Must(template.New("report").Parse(pageHTML))

// Backtest is one replayed series: its name (a file name), the timeline
// (with ticks) and the policy it ran under.
type Backtest struct {
	Name     string
	Timeline *backtest.Timeline
	Policy   *evaluator.Policy
	// Degraded is the ground truth that minutes on a degraded route count
	// against (a scenario's "# degraded:" lines); nil counts the routes
	// Hermes held below normal.
	Degraded backtest.Degraded
}

// degradedBy says what "degraded" meant in the summary.
func (r Backtest) degradedBy() string {
	if r.Degraded != nil {
		return "the scenario's ground truth (# degraded: lines)"
	}
	return "the routes' levels below normal"
}

type section struct {
	Name       string
	Start      string
	End        string
	Step       string
	Summary    backtest.Summary
	DegradedBy string
	Services   []template.HTML
	Routes     []template.HTML
	Events     []string
}

// pageData is what report.html renders: plain backtests, or comparisons.
type pageData struct {
	Sections []section
	Compares []compareSection
}

// Write renders the report of backtests to w.
func Write(w io.Writer, backtests []Backtest) error {
	var data pageData
	for _, r := range backtests {
		data.Sections = append(data.Sections, build(r))
	}
	return execute(w, data)
}

func execute(w io.Writer, data pageData) error {
	if err := page.Execute(w, data); err != nil {
		return fmt.Errorf("writing the report: %w", err)
	}
	return nil
}

func build(r Backtest) section {
	tl, pol := r.Timeline, r.Policy
	sec := section{Name: r.Name, Start: tl.Start.UTC().Format(time.RFC3339), End: tl.End.UTC().Format(time.RFC3339),
		Step: tl.Step.String(), Summary: backtest.Summarize(tl, r.Degraded), DegradedBy: r.degradedBy()}
	colors := charts.RouteColors(pol.Routes())
	for _, svc := range pol.Config.Services {
		sec.Services = append(sec.Services, charts.SplitChart(svc.Name, svc.Routes, tl.Ticks, colors).SVG())
	}
	bands := Bands(pol)
	for _, route := range pol.Routes() {
		sec.Routes = append(sec.Routes, charts.ScoreChart(route, tl.Ticks, bands, tl.Events, colors[route]).SVG())
	}
	for _, e := range tl.Events {
		if e.Type == evaluator.EventLevel || e.Type == evaluator.EventAlert || e.Type == evaluator.EventFailback {
			sec.Events = append(sec.Events, charts.EventLine(e))
		}
	}
	return sec
}

// Bands are the score ranges of pol's levels (see charts.LevelBands).
func Bands(pol *evaluator.Policy) []charts.Band {
	var th []charts.Threshold
	for _, l := range pol.Config.Levels {
		th = append(th, charts.Threshold{Name: l.Name, Below: l.Below})
	}
	return charts.LevelBands(th)
}
