package web

import (
	_ "embed"
	"html/template"
	"net/http"
	"strconv"
	"time"

	"github.com/hermes-failover/hermes/web/api"
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
	"score": formatScore,
	"scoreClass": func(v float64) string {
		switch {
		case v < 60:
			return "bad"
		case v < 75:
			return "poor"
		case v < 85:
			return "fair"
		}
		return "good"
	},
}).Parse(pageHTML))

func formatScore(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

type pageData struct {
	Now    time.Time
	Status api.Status
}

// page renders the status at a glance, server-side, with no JavaScript.
func (h *handler) page(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	if err := pageTmpl.Execute(w, pageData{Now: h.o.Now(), Status: h.o.Backend.Status()}); err != nil {
		h.o.Logger.Error("status page", "err", err)
	}
}
