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
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/runner"
	"github.com/hermes-failover/hermes/runner/telemetry"
	"github.com/hermes-failover/hermes/traffic"
	"github.com/hermes-failover/hermes/web/api"
)

// Loop is what the endpoints ask the live loop: the one interface between
// web and the loop, defined here where it is used, as Prometheus's web
// asks its rule manager through an interface of its own. Live adapts
// *runner.Runner to it, building the status's wire types from
// runner.View; tests fake it in those wire types.
type Loop interface {
	Ready() bool
	Status() api.Status
	Reload(ctx context.Context) error
	// Submit queues an operator command for the next tick and waits for
	// it (see runner.Runner.Submit): an error refuses the command.
	Submit(ctx context.Context, cmd evaluator.Command) (runner.CommandResult, error)
	// History tells the past ticks and events, from Prometheus or the
	// loop's memory (source says which); the status page draws them.
	History(ctx context.Context, since time.Time) (ticks []evaluator.Tick, events []evaluator.Event, source string)
	// Actuations are the actuators' applies that changed a split or
	// failed, from Prometheus or memory like the ticks.
	Actuations(ctx context.Context, since time.Time) (acts []evaluator.Actuation, source string)
}

// Options configure the handler.
type Options struct {
	Loop     Loop
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
	mux.Handle("GET /metrics", telemetry.Handler(o.Gatherer))
	mux.HandleFunc("GET /{$}", h.page)
	return mux
}

// HandlerWait bounds how long a handler waits for the loop (a reload, or
// a command's tick); a command still queued then is answered 202. The HTTP
// server's write timeout must stay above it.
const HandlerWait = time.Minute

type handler struct{ o Options }

func (h *handler) ready(w http.ResponseWriter, _ *http.Request) {
	if !h.o.Loop.Ready() {
		msg := "Hermes is not ready: restoring state or waiting for the first tick."
		if h.o.Loop.Status().Ticked {
			msg = "Hermes is not ready: restored, but the last tick had no data from Prometheus (every signal query failed), so nothing is written to the backends but pins and pauses."
		}
		http.Error(w, msg, http.StatusServiceUnavailable)
		return
	}
	fmt.Fprintln(w, "Hermes is Ready.")
}

// status answers the status; ?service=NAME narrows it to one service (its
// routes and alerts), as the page's ?service= does, so a client of a
// large fleet need not read every route (9.8 MB at 10,000 routes).
func (h *handler) status(w http.ResponseWriter, r *http.Request) {
	st := h.o.Loop.Status()
	if name := r.URL.Query().Get("service"); name != "" {
		i := slices.IndexFunc(st.Services, func(s api.Service) bool { return s.Name == name })
		if i < 0 {
			writeError(w, api.ErrorNotFound, fmt.Errorf("service %q: no such service", name))
			return
		}
		st.Services = st.Services[i : i+1]
		st.Alerts = alertsOf(st.Alerts, name)
		if st.Alerts == nil {
			st.Alerts = []api.Alert{}
		}
	}
	writeJSON(w, http.StatusOK, st)
}

func (h *handler) reload(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), HandlerWait)
	defer cancel()
	if err := h.o.Loop.Reload(ctx); err != nil {
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
	h.submit(w, r, evaluator.Command{Kind: evaluator.CommandRelease, Route: req.Route, Reason: req.Reason, By: req.By})
}

func (h *handler) setOverride(w http.ResponseWriter, r *http.Request) {
	var req api.OverrideRequest
	if !decode(w, r, &req) {
		return
	}
	kind, err := traffic.ParseOverrideKind(req.Kind)
	if err != nil {
		writeError(w, api.ErrorBadData, err)
		return
	}
	cmd := evaluator.Command{Kind: evaluator.CommandKind(kind), Service: req.Service, Route: req.Route, Reason: req.Reason, By: req.By, Replace: req.Replace}
	if req.ExpiresIn != "" {
		d, err := time.ParseDuration(req.ExpiresIn)
		if err != nil || d <= 0 {
			writeError(w, api.ErrorBadData, fmt.Errorf("expires_in: want a positive duration such as 30m, got %q", req.ExpiresIn))
			return
		}
		cmd.Expires = h.o.Now().Add(d)
	}
	h.submit(w, r, cmd)
}

func (h *handler) clearOverride(w http.ResponseWriter, r *http.Request) {
	reason, ok := queryReason(w, r)
	if !ok {
		return
	}
	h.submit(w, r, evaluator.Command{Kind: evaluator.CommandClear, Service: r.PathValue("service"), Reason: reason, By: r.URL.Query().Get("by")})
}

// queryReason is the required ?reason= of a DELETE; it answers the
// request itself (400) and returns false when there is none.
func queryReason(w http.ResponseWriter, r *http.Request) (string, bool) {
	reason := r.URL.Query().Get("reason")
	if reason == "" {
		writeError(w, api.ErrorBadData, errors.New("a reason is required (?reason=…)"))
	}
	return reason, reason != ""
}

// submit hands a command to the loop and answers the request: 200 with
// the reply when a tick applied the command, 202 when it is still queued,
// 400 (refused) when the loop refuses it.
func (h *handler) submit(w http.ResponseWriter, r *http.Request, cmd evaluator.Command) {
	ctx, cancel := context.WithTimeout(r.Context(), HandlerWait)
	defer cancel()
	res, err := h.o.Loop.Submit(ctx, cmd)
	if err != nil {
		writeError(w, api.ErrorRefused, err)
		return
	}
	code := http.StatusOK
	if !res.Applied {
		code = http.StatusAccepted
	}
	rp := commandReply(cmd, res)
	if res.Applied && cmd.Service != "" {
		h.noteSplit(&rp)
	}
	writeJSON(w, code, api.Response[api.CommandReply]{Status: api.StatusSuccess, Data: rp})
}

// noteSplit adds to the reply of an applied pin, pause or clear whether
// the service's split is unknown, as the loop holds it once the command
// applied, and says what that leaves undone. It reads the whole status:
// a command is rare, and the status is the one place that decides it.
func (h *handler) noteSplit(rp *api.CommandReply) {
	st := h.o.Loop.Status()
	i := slices.IndexFunc(st.Services, func(s api.Service) bool { return s.Name == rp.Service })
	if i < 0 {
		return
	}
	svc := st.Services[i]
	rp.SplitUnknown, rp.SplitUnknownAfterOverride = svc.SplitUnknown, svc.SplitUnknownAfterOverride
	rp.Note = splitNote(rp.Command, svc)
}

// commandReply is the wire form of what the loop did with cmd: the one
// conversion from the runner's CommandResult, which the runner keeps as
// its own type because it may not import web/... (TestLayout).
func commandReply(cmd evaluator.Command, res runner.CommandResult) api.CommandReply {
	rp := api.CommandReply{Command: cmd.Kind, Tick: res.Tick, Service: cmd.Service, Route: cmd.Route}
	if !res.Applied {
		rp.Outcome = api.OutcomeQueued
		return rp
	}
	switch cmd.Kind {
	case evaluator.CommandRelease:
		rp.Outcome = api.OutcomeReleased
	case evaluator.CommandPin, evaluator.CommandPause:
		rp.Outcome = api.OutcomeSet
		rp.Override = &evaluator.Override{Kind: traffic.OverrideKind(cmd.Kind), Route: cmd.Route, Reason: cmd.Reason, By: cmd.By,
			Since: res.Tick, Expires: cmd.Expires}
	case evaluator.CommandClear:
		rp.Outcome = api.OutcomeCleared
	case evaluator.CommandDrill:
		rp.Outcome = api.OutcomeStarted
		rp.DrillKind, rp.DryRun, rp.Until = evaluator.DrillKind(cmd.Signals), cmd.DryRun, cmd.Expires
	case evaluator.CommandEndDrill:
		rp.Outcome = api.OutcomeStopped
	}
	return rp
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
		writeError(w, api.ErrorBadData, fmt.Errorf("bad request body: %w", err))
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

// writeError answers with an error reply of class typ, under its HTTP code.
func writeError(w http.ResponseWriter, typ api.ErrorType, err error) {
	writeJSON(w, typ.HTTPCode(), api.ErrorReply{Status: api.StatusError, ErrorType: typ, Error: err.Error()})
}
