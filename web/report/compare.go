package report

import (
	"html/template"
	"io"
	"time"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/web/charts"
)

// Compare is one history replayed through the current policy and a
// candidate (`hermes backtest --compare`): the same Name and Degraded for
// both, each with its own timeline and policy.
type Compare struct {
	Current, Candidate Backtest
	// CurrentName and CandidateName name the two policies, by their files;
	// empty: "current" and "candidate".
	CurrentName, CandidateName string
}

type compareSection struct {
	Name string
	// CurrentName and CandidateName name the policies (Compare).
	CurrentName, CandidateName string
	Start                      string
	End                        string
	Step                       string
	Rows                       []compareRow
	DegradedBy                 string
	Services                   []template.HTML
	Routes                     []template.HTML
	Decisions                  []string
}

type compareRow struct {
	Label, Current, Candidate string
	Differs                   bool
}

// WriteCompare renders the report of comparisons to w: for each, both
// summaries side by side, each service's split under both policies on one
// chart, each route's score under both, and the decisions that differ.
func WriteCompare(w io.Writer, compares []Compare) error {
	var data pageData
	for _, c := range compares {
		data.Compares = append(data.Compares, buildCompare(c))
	}
	return execute(w, data)
}

func buildCompare(c Compare) compareSection {
	cur, cand := c.Current.Timeline, c.Candidate.Timeline
	curName, candName := c.CurrentName, c.CandidateName
	if curName == "" || candName == "" {
		curName, candName = "current", "candidate"
	}
	cmp := backtest.CompareNamed(curName, cur, candName, cand, c.Current.Degraded)
	sec := compareSection{Name: c.Current.Name, CurrentName: cmp.CurrentName, CandidateName: cmp.CandidateName, Start: cur.Start.UTC().Format(time.RFC3339), End: cur.End.UTC().Format(time.RFC3339),
		Step: cur.Step.String(), DegradedBy: c.Current.degradedBy()}
	a, b := cmp.Current.Rows(), cmp.Candidate.Rows()
	for i, label := range backtest.SummaryLabels {
		sec.Rows = append(sec.Rows, compareRow{Label: label, Current: a[i], Candidate: b[i], Differs: a[i] != b[i]})
	}
	pol := c.Current.Policy
	colors := charts.RouteColors(pol.Routes())
	for _, svc := range pol.Config.Services {
		sec.Services = append(sec.Services, charts.CompareSplitChart(svc.Name, svc.Routes, cur.Ticks, cand.Ticks, colors).SVG())
	}
	bands := Bands(pol)
	for _, route := range pol.Routes() {
		sec.Routes = append(sec.Routes, charts.CompareScoreChart(route, cur.Ticks, cand.Ticks, bands, levelEvents(cur), levelEvents(cand), colors[route]).SVG())
	}
	for _, d := range cmp.Decisions() {
		sec.Decisions = append(sec.Decisions, d.Policy+"  "+charts.EventLine(d.Event))
	}
	return sec
}

// levelEvents are the level changes and failback stages of tl, the
// markers of a comparison's score charts (its alerts would crowd them).
func levelEvents(tl *backtest.Timeline) []evaluator.Event {
	var out []evaluator.Event
	for _, e := range tl.Events {
		if e.Type != evaluator.EventAlert {
			out = append(out, e)
		}
	}
	return out
}
