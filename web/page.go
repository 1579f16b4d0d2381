package web

import (
	_ "embed"
	"html/template"
	"net/http"
	"strconv"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/traffic"
	"github.com/hermes-failover/hermes/web/api"
	"github.com/hermes-failover/hermes/web/charts"
)

//go:embed status.html
var pageHTML string

var pageTmpl = template.Must(template.New("status").Funcs(template.FuncMap{
	"ago": func(now, t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return now.Sub(t).Truncate(time.Second).String() + " ago"
	},
	"ts": func(t time.Time) string {
		if t.IsZero() {
			return "—"
		}
		return t.UTC().Format("2006-01-02 15:04:05Z")
	},
	"score":      formatScore,
	"scoreClass": scoreClass,
	"nextStep":   nextStep,
}).Parse(pageHTML + candidateHTML))

// scoreClass names the band of score v among the configured level
// thresholds (mildest first): good above them all, then fair, poor and bad
// for warm, shed and failover.
func scoreClass(v float64, levels []api.Level) string {
	class := "good"
	for i, l := range levels {
		if v < l.Below && i < len(scoreClasses) {
			class = scoreClasses[i]
		}
	}
	return class
}

var scoreClasses = []string{"fair", "poor", "bad"}

// nextStep is what an operator can do about a route, as the exact command.
func nextStep(svc api.Service, rt api.Route) string {
	switch {
	case rt.Level == traffic.Manual.String():
		return "hermes ctl release " + rt.Name + ` --reason "…"`
	case svc.Override != nil:
		return "hermes ctl clear " + svc.Name + ` --reason "…"`
	case rt.Level == traffic.Failover.String() || rt.Level == traffic.Shed.String() || rt.Level == traffic.Warm.String():
		return "hermes explain --route " + rt.Name
	}
	return ""
}

func formatScore(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

type pageData struct {
	Now    time.Time
	Status api.Status
	// Colors are the routes' colours (charts.RouteColors).
	Colors map[string]template.CSS
	// History holds the charts of the last historyWindow and the recent
	// events.
	History *history
}

type history struct {
	Window string
	// Source is where the ticks come from, ActuationSource where the
	// actuations do: "prometheus" or "memory".
	Source          string
	ActuationSource string
	Splits          []template.HTML
	Scores          []template.HTML
	Events          []string
}

// historyWindow is how far back the status page's charts go.
const historyWindow = 3 * time.Hour

// recentEvents is how many events the status page lists.
const recentEvents = 30

// buildHistory draws the charts of st's services and routes from ticks,
// with the actuations marked on each service's split and on the scores of
// its routes, and lists the recent events worth reading (levels,
// failbacks, alerts, overrides), newest first.
func buildHistory(st api.Status, ticks []evaluator.Tick, events []evaluator.Event, acts []evaluator.Actuation, source string, colors map[string]string) *history {
	h := &history{Window: historyWindow.String(), Source: source}
	var th []charts.Threshold
	for _, l := range st.Levels {
		th = append(th, charts.Threshold{Name: l.Name, Below: l.Below})
	}
	bands := charts.LevelBands(th)
	var order []string
	servicesOf := map[string][]string{} // route → its services
	for _, svc := range st.Services {
		var routes []string
		for _, rt := range svc.Routes {
			routes = append(routes, rt.Name)
			if servicesOf[rt.Name] == nil {
				order = append(order, rt.Name)
			}
			servicesOf[rt.Name] = append(servicesOf[rt.Name], svc.Name)
		}
		split := charts.SplitChart(svc.Name, routes, ticks, colors)
		split.Markers = charts.ActuationMarkers(acts, svc.Name)
		h.Splits = append(h.Splits, split.SVG())
	}
	for _, r := range order {
		score := charts.ScoreChart(r, ticks, bands, events, colors[r])
		score.Markers = append(score.Markers, charts.ActuationMarkers(acts, servicesOf[r]...)...)
		h.Scores = append(h.Scores, score.SVG())
	}
	for i := len(events) - 1; i >= 0 && len(h.Events) < recentEvents; i-- {
		switch events[i].Type {
		case evaluator.EventLevel, evaluator.EventFailback, evaluator.EventAlert, evaluator.EventOverride, evaluator.EventCommand:
			h.Events = append(h.Events, charts.EventLine(events[i]))
		}
	}
	return h
}

// page renders the status at a glance, server-side, with no JavaScript.
func (h *handler) page(w http.ResponseWriter, req *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	st := h.o.Loop.Status()
	var routes []string
	for _, svc := range st.Services {
		for _, rt := range svc.Routes {
			routes = append(routes, rt.Name)
		}
	}
	rc := charts.RouteColors(routes)
	data := pageData{Now: h.o.Now(), Status: st, Colors: map[string]template.CSS{}}
	for r, c := range rc {
		data.Colors[r] = template.CSS(c) // a "#rrggbb" of the palette
	}
	since := data.Now.Add(-historyWindow)
	ticks, events, source := h.o.Loop.History(req.Context(), since)
	acts, actSource := h.o.Loop.Actuations(req.Context(), since)
	data.History = buildHistory(st, ticks, events, acts, source, rc)
	data.History.ActuationSource = actSource
	if err := pageTmpl.Execute(w, data); err != nil {
		h.o.Logger.Error("status page", "err", err)
	}
}
