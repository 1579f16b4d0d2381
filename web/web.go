// Package web serves Hermes's HTTP endpoints: health and readiness, reload,
// the status API and page, the admin API for operator controls, and
// /metrics.
package web

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/traffic"
	"github.com/hermes-failover/hermes/web/api"
)

// Backend is what the handlers need from the running evaluator.
type Backend interface {
	Ready() bool
	Status() api.Status
	Reload(ctx context.Context) error
	// Submit queues an operator command for the next tick and waits for
	// it (see runner.Runner.Submit): an error refuses the command.
	Submit(ctx context.Context, cmd evaluator.Command) (api.CommandResult, error)
}

// Options configure the handler.
type Options struct {
	Backend  Backend
	Gatherer prometheus.Gatherer
	Logger   *slog.Logger
	// EnableAdminAPI opens /api/v1/admin/* (operator commands); closed, it
	// answers 403.
	EnableAdminAPI bool
	// EnableLifecycle opens /-/reload; closed, it answers 403.
	EnableLifecycle bool
	// AdminToken, when set, is required as a bearer token by the admin API
	// and /-/reload.
	AdminToken string
	Now        func() time.Time
}

// Handler returns the HTTP handler of every endpoint.
func Handler(o Options) http.Handler {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	h := &handler{o: o}
	gd := newGuard(o.AdminToken)
	lifecycle := endpointGroup{name: "lifecycle API", flag: "--web.enable-lifecycle", enabled: o.EnableLifecycle}
	admin := endpointGroup{name: "admin API", flag: "--web.enable-admin-api", enabled: o.EnableAdminAPI}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /-/healthy", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "Hermes is Healthy.") })
	mux.HandleFunc("GET /-/ready", h.ready)
	mux.HandleFunc("POST /-/reload", gd.wrap(lifecycle, h.reload))
	mux.HandleFunc("PUT /-/reload", gd.wrap(lifecycle, h.reload))
	mux.HandleFunc("GET /api/v1/status", h.status)
	mux.HandleFunc("POST /api/v1/admin/release", gd.wrap(admin, h.release))
	mux.HandleFunc("POST /api/v1/admin/overrides", gd.wrap(admin, h.setOverride))
	mux.HandleFunc("DELETE /api/v1/admin/overrides/{service}", gd.wrap(admin, h.clearOverride))
	mux.HandleFunc("POST /api/v1/admin/drills", gd.wrap(admin, h.startDrill))
	mux.HandleFunc("DELETE /api/v1/admin/drills/{route}", gd.wrap(admin, h.stopDrill))
	mux.Handle("GET /metrics", promhttp.HandlerFor(o.Gatherer, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /{$}", h.page)
	return mux
}

// HandlerWait bounds how long a handler waits for the loop (a reload, or
// a command's tick); a command still queued then is answered 202. The HTTP
// server's write timeout must stay above it.
const HandlerWait = time.Minute

type handler struct{ o Options }

func (h *handler) ready(w http.ResponseWriter, _ *http.Request) {
	if !h.o.Backend.Ready() {
		msg := "Hermes is not ready: restoring state or waiting for the first tick."
		if h.o.Backend.Status().Ticked {
			msg = "Hermes is not ready: restored, but the last tick had no data from Prometheus (every signal query failed), so nothing is written to the backends but pins and pauses."
		}
		http.Error(w, msg, http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "Hermes is Ready.")
}

func (h *handler) status(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, h.o.Backend.Status())
}

func (h *handler) reload(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), HandlerWait)
	defer cancel()
	if err := h.o.Backend.Reload(ctx); err != nil {
		http.Error(w, "failed to reload config: "+err.Error(), http.StatusInternalServerError)
		return
	}
	fmt.Fprintln(w, "configuration reloaded")
}

func (h *handler) release(w http.ResponseWriter, r *http.Request) {
	var req api.ReleaseRequest
	if !decode(w, r, &req) {
		return
	}
	cmd := evaluator.Command{Kind: evaluator.CommandRelease, Route: req.Route, Reason: req.Reason, By: req.By}
	if res, ok := h.submit(w, r, cmd); ok {
		writeJSON(w, http.StatusOK, map[string]any{"status": "released", "route": req.Route, "tick": res.Tick})
	}
}

func (h *handler) setOverride(w http.ResponseWriter, r *http.Request) {
	var req api.OverrideRequest
	if !decode(w, r, &req) {
		return
	}
	kind, err := traffic.ParseOverrideKind(req.Kind)
	if err != nil {
		writeError(w, http.StatusBadRequest, err)
		return
	}
	cmd := evaluator.Command{Kind: evaluator.CommandKind(kind), Service: req.Service, Route: req.Route, Reason: req.Reason, By: req.By, Replace: req.Replace}
	if req.ExpiresIn != "" {
		d, err := time.ParseDuration(req.ExpiresIn)
		if err != nil || d <= 0 {
			writeError(w, http.StatusBadRequest, fmt.Errorf("expires_in: want a positive duration such as 30m, got %q", req.ExpiresIn))
			return
		}
		cmd.Expires = h.o.Now().Add(d)
	}
	if res, ok := h.submit(w, r, cmd); ok {
		o := evaluator.Override{Kind: kind, Route: req.Route, Reason: req.Reason, By: req.By, Since: res.Tick, Expires: cmd.Expires}
		writeJSON(w, http.StatusOK, map[string]any{"status": "set", "service": req.Service, "override": o, "tick": res.Tick})
	}
}

func (h *handler) clearOverride(w http.ResponseWriter, r *http.Request) {
	reason, ok := queryReason(w, r)
	if !ok {
		return
	}
	cmd := evaluator.Command{Kind: evaluator.CommandClear, Service: r.PathValue("service"), Reason: reason, By: r.URL.Query().Get("by")}
	if res, ok := h.submit(w, r, cmd); ok {
		writeJSON(w, http.StatusOK, map[string]any{"status": "cleared", "service": cmd.Service, "tick": res.Tick})
	}
}

// queryReason is the required ?reason= of a DELETE; it answers the
// request itself (400) and returns false when there is none.
func queryReason(w http.ResponseWriter, r *http.Request) (string, bool) {
	reason := r.URL.Query().Get("reason")
	if reason == "" {
		writeError(w, http.StatusBadRequest, errors.New("a reason is required (?reason=…)"))
	}
	return reason, reason != ""
}

// submit hands a command to the backend. It answers the request itself
// when the command is refused (400) or still queued (202 with the tick it
// will apply at), and returns true when the command was applied.
func (h *handler) submit(w http.ResponseWriter, r *http.Request, cmd evaluator.Command) (api.CommandResult, bool) {
	ctx, cancel := context.WithTimeout(r.Context(), HandlerWait)
	defer cancel()
	res, err := h.o.Backend.Submit(ctx, cmd)
	switch {
	case err != nil:
		writeError(w, http.StatusBadRequest, err)
		return res, false
	case !res.Applied:
		writeJSON(w, http.StatusAccepted, map[string]any{"status": "queued", "command": cmd.Kind, "applies_at": res.Tick})
		return res, false
	}
	return res, true
}

// decode reads a JSON request body into v, strictly; it answers the
// request itself and returns false when the body is refused.
func decode(w http.ResponseWriter, r *http.Request, v any) bool {
	if !requireJSON(w, r) {
		return false
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		writeError(w, http.StatusBadRequest, fmt.Errorf("bad request body: %w", err))
		return false
	}
	return true
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(v)
}

func writeError(w http.ResponseWriter, code int, err error) {
	writeJSON(w, code, map[string]string{"status": "error", "error": err.Error()})
}
