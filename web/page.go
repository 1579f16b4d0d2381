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
	"scoreTitle": scoreTitle,
	"nextStep":   nextStep,
	"pageRows":   func() int { return pageRows },
}).Parse(pageHTML + candidateHTML))

// scoreClass names the band of score v among the configured level
// thresholds (mildest first): good above them all, then fair, poor and bad
// for warm, shed and failover; a route at a worse level than its score's
// band takes the level's (issue 34: a failed-over route showed "85.5" in
// green, a failback stuck at stage 1 "100.0").
func scoreClass(v float64, level string, levels []api.Level) string {
	band := 0
	for i, l := range levels {
		if v < l.Below && i < len(scoreClasses)-1 {
			band = i + 1
		}
	}
	return scoreClasses[max(band, levelBand[level])]
}

var scoreClasses = []string{"good", "fair", "poor", "bad"}

// levelBand is the score band each level shows at least.
var levelBand = map[string]int{
	traffic.Warm.String(): 1, traffic.Shed.String(): 2, traffic.Failover.String(): 3, traffic.Manual.String(): 3,
}

// scoreTitle says why a score is coloured by its route's level rather
// than by its value, or nothing when the value's band says it.
func scoreTitle(v float64, level string, levels []api.Level) string {
	if scoreClass(v, "", levels) == scoreClass(v, level, levels) {
		return ""
	}
	return "the score is " + formatScore(v) + ", but the route is at " + level + ": the level decides its traffic"
}

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
	// Services are the services the page draws, with the rows it lists
	// (see pageView); Normal the services summarised as one line each.
	Services []serviceView
	Normal   []serviceView
	// Summarised is true when the page lists only the routes that are not
	// normal (more than pageRows routes); Service is the ?service= the
	// page shows, Pages the links to its other pages.
	Summarised bool
	Service    string
	Pages      []pageLink
	// HiddenAlerts is how many alerts are left off the page (past
	// pageRows); the API lists them all.
	HiddenAlerts int
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
	// Hidden is how many score charts a summarised page leaves off.
	Hidden int
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
		if svc.SplitUnknown {
			// The ticks since the restart hold the core's placeholder
			// (the first route at 100 %), not what the backends send.
			h.Splits = append(h.Splits, template.HTML(`<p class="meta split-unknown" id="split-chart-`+template.HTMLEscapeString(svc.Name)+`">service `+
				template.HTMLEscapeString(svc.Name)+`: no traffic split chart: the split is unknown (held), and the ticks hold a placeholder, not what the backends send.</p>`))
			continue
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
// Past pageRows routes it summarises (see pageView): ?service= shows one
// service's routes in full, ?page= pages them.
func (h *handler) page(w http.ResponseWriter, req *http.Request) {
	st := h.o.Loop.Status()
	data := pageData{Now: h.o.Now(), Status: st, Colors: map[string]template.CSS{}}
	if err := pageView(&data, req.URL.Query()); err != nil {
		http.Error(w, err.Error(), err.code)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	var routes []string
	for _, svc := range st.Services {
		for _, rt := range svc.Routes {
			routes = append(routes, rt.Name)
		}
	}
	rc := charts.RouteColors(routes)
	for r, c := range rc {
		data.Colors[r] = template.CSS(c) // a "#rrggbb" of the palette
	}
	since := data.Now.Add(-historyWindow)
	ticks, events, source := h.o.Loop.History(req.Context(), since)
	acts, actSource := h.o.Loop.Actuations(req.Context(), since)
	data.History = buildHistory(chartedStatus(data, ticks), ticks, events, acts, source, rc)
	data.History.ActuationSource = actSource
	if data.Summarised && len(data.History.Scores) > summaryScoreCharts {
		data.History.Hidden = len(data.History.Scores) - summaryScoreCharts
		data.History.Scores = data.History.Scores[:summaryScoreCharts]
	}
	if err := pageTmpl.Execute(w, data); err != nil {
		h.o.Logger.Error("status page", "err", err)
	}
}
