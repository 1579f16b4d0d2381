package web

import (
	"fmt"
	"net/http"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/web/api"
)

// startDrill is POST /api/v1/admin/drills: a fault drill on one route (see
// evaluator.Drill), an admin command like the others.
func (h *handler) startDrill(w http.ResponseWriter, r *http.Request) {
	var req api.DrillRequest
	if !decode(w, r, &req) {
		return
	}
	d, err := time.ParseDuration(req.For)
	if err != nil || d <= 0 {
		writeError(w, api.ErrorBadData, fmt.Errorf("for: want a positive duration such as 10m (a drill must end by itself), got %q", req.For))
		return
	}
	h.submit(w, r, evaluator.Command{Kind: evaluator.CommandDrill, Route: req.Route, Signals: req.Signals, Reason: req.Reason, By: req.By,
		DryRun: req.DryRun, Expires: h.o.Now().Add(d)})
}

// stopDrill is DELETE /api/v1/admin/drills/{route}?reason=…: ends a drill
// before it expires.
func (h *handler) stopDrill(w http.ResponseWriter, r *http.Request) {
	reason, ok := queryReason(w, r)
	if !ok {
		return
	}
	h.submit(w, r, evaluator.Command{Kind: evaluator.CommandEndDrill, Route: r.PathValue("route"), Reason: reason, By: r.URL.Query().Get("by")})
}
