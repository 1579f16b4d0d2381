// Package web serves Hermes's HTTP endpoints: health and readiness, reload,
// the status API and page, the admin API for operator controls, and
// /metrics.
package web

import (
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/evaluator/traffic"
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
	mux := http.NewServeMux()
	mux.HandleFunc("GET /-/healthy", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "Hermes is Healthy.") })
	mux.HandleFunc("GET /-/ready", h.ready)
	mux.HandleFunc("POST /-/reload", h.admin(h.reload))
	mux.HandleFunc("PUT /-/reload", h.admin(h.reload))
	mux.HandleFunc("GET /api/v1/status", h.status)
	mux.HandleFunc("POST /api/v1/admin/release", h.admin(h.release))
	mux.HandleFunc("POST /api/v1/admin/overrides", h.admin(h.setOverride))
	mux.HandleFunc("DELETE /api/v1/admin/overrides/{service}", h.admin(h.clearOverride))
	mux.Handle("GET /metrics", promhttp.HandlerFor(o.Gatherer, promhttp.HandlerOpts{}))
	mux.HandleFunc("GET /{$}", h.page)
	return mux
}

type handler struct{ o Options }

func (h *handler) ready(w http.ResponseWriter, _ *http.Request) {
	if !h.o.Backend.Ready() {
		http.Error(w, "Hermes is not ready: restoring state or waiting for the first tick.", http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "Hermes is Ready.")
}

func (h *handler) status(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, h.o.Backend.Status())
}

func (h *handler) reload(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), time.Minute)
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
	cmd := evaluator.Command{Kind: evaluator.CommandKind(kind), Service: req.Service, Route: req.Route, Reason: req.Reason, By: req.By}
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
	reason := r.URL.Query().Get("reason")
	if reason == "" {
		writeError(w, http.StatusBadRequest, errors.New("a reason is required (?reason=…)"))
		return
	}
	cmd := evaluator.Command{Kind: evaluator.CommandClear, Service: r.PathValue("service"), Reason: reason, By: r.URL.Query().Get("by")}
	if res, ok := h.submit(w, r, cmd); ok {
		writeJSON(w, http.StatusOK, map[string]any{"status": "cleared", "service": cmd.Service, "tick": res.Tick})
	}
}

// submit hands a command to the backend. It answers the request itself
// when the command is refused (400) or still queued (202 with the tick it
// will apply at), and returns true when the command was applied.
func (h *handler) submit(w http.ResponseWriter, r *http.Request, cmd evaluator.Command) (api.CommandResult, bool) {
	res, err := h.o.Backend.Submit(r.Context(), cmd)
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

// admin guards a handler with the admin token, when one is configured.
func (h *handler) admin(next http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if h.o.AdminToken != "" {
			got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok || subtle.ConstantTimeCompare([]byte(got), []byte(h.o.AdminToken)) != 1 {
				writeError(w, http.StatusUnauthorized, errors.New("admin token required"))
				return
			}
		}
		next(w, r)
	}
}

func decode(w http.ResponseWriter, r *http.Request, v any) bool {
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
