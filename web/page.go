package web

import (
	_ "embed"
	"html/template"
	"net/http"
	"strconv"
	"time"

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
}).Parse(pageHTML))

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
	case rt.Level == "manual":
		return "hermes ctl release " + rt.Name + ` --reason "…"`
	case svc.Override != nil:
		return "hermes ctl clear " + svc.Name + ` --reason "…"`
	case rt.Level == "failover" || rt.Level == "shed" || rt.Level == "warm":
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
}

// page renders the status at a glance, server-side, with no JavaScript.
func (h *handler) page(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	st := h.o.Backend.Status()
	var routes []string
	for _, svc := range st.Services {
		for _, rt := range svc.Routes {
			routes = append(routes, rt.Name)
		}
	}
	colors := map[string]template.CSS{}
	for r, c := range charts.RouteColors(routes) {
		colors[r] = template.CSS(c) // a "#rrggbb" of the palette
	}
	if err := pageTmpl.Execute(w, pageData{Now: h.o.Now(), Status: st, Colors: colors}); err != nil {
		h.o.Logger.Error("status page", "err", err)
	}
}
