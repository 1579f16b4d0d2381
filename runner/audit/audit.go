// Package audit is the audit stage of the live loop: it writes the
// core's decisions of every tick to the audit log, one JSON line per
// event, and logs them, a fleet's worth of one type as one line. It
// owns its logging of failing alert expressions; it reads the tick's
// Result and nothing of another stage.
package audit

import (
	"context"
	"log/slog"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/runner/auditlog"
	"github.com/hermes-failover/hermes/runner/condlog"
	"github.com/hermes-failover/hermes/runner/tick"
)

// Stage writes the core's decisions of every tick to the audit log,
// one JSON line per event, and logs them: one line per event, but one
// line per type for a type with more than burstEvents events in a tick.
// Alert expression failures come every tick while they last: they are
// logged when an alert's start and end to fail (condlog.Log), and
// counted (the telemetry stage), not audited.
type Stage struct {
	log   *slog.Logger
	audit *auditlog.Log
	// logged are the failing alert expressions; only Tick's goroutine
	// uses it.
	logged *condlog.Log
}

// New audits to audit and logs to log.
func New(log *slog.Logger, audit *auditlog.Log) *Stage {
	return &Stage{log: log, audit: audit, logged: condlog.New(log)}
}

// burstEvents is how many events of one type a tick logs a line each
// for. Beyond it (a start-up that gives every service of the fleet its
// first split, an outage behind every route) the type gets one line with
// the count and the first few targets; the audit log has every event.
const burstEvents = 10

// Tick audits and logs the tick's events.
func (s *Stage) Tick(_ context.Context, t *tick.Result) {
	count := map[string]int{}
	for _, e := range t.Events {
		count[e.Type]++
	}
	var types []string // of the summed up types, in order of appearance
	targets := map[string][]string{}
	for _, e := range t.Events {
		switch {
		case e.Type == evaluator.EventAlertError:
		case count[e.Type] > burstEvents:
			e.Time = e.Time.UTC()
			e.Annotations = t.Policy.EventText(&e)
			s.audit.Write(e)
		default:
			e.Annotations = t.Policy.EventText(&e)
			s.event(e)
			continue
		}
		if targets[e.Type] == nil {
			types = append(types, e.Type)
		}
		targets[e.Type] = append(targets[e.Type], target(e))
	}
	for _, typ := range types {
		if typ == evaluator.EventAlertError {
			continue
		}
		s.log.Info("events of the tick: "+typ+"; the audit log has each", "events", len(targets[typ]), "first", condlog.FirstFew(targets[typ]))
	}
	failed := map[string][]evaluator.Event{}
	var names []string
	for _, e := range t.Events {
		if e.Type != evaluator.EventAlertError {
			continue
		}
		if failed[e.Name] == nil {
			names = append(names, e.Name)
		}
		failed[e.Name] = append(failed[e.Name], e)
	}
	// The error's words are left out of Same: one may carry the value
	// the expression gave, which changes from tick to tick.
	failing := make(map[string]condlog.Line, len(names))
	for _, name := range names {
		es := failed[name]
		e := es[0]
		failing[name] = condlog.Line{Level: slog.LevelWarn, Msg: "alert expression failed; the alert counts as not holding",
			Attrs: []any{"alert", name, "targets", len(es), "service", e.Service, "route", e.Route, "err", e.Reasons}, End: "alert expression works again", EndAttrs: []any{"alert", name}}
	}
	s.logged.Observe(t.Time, "alert errors", failing)
}

// target names what event e is about: service/route, the service, the
// route or the alert.
func target(e evaluator.Event) string {
	switch {
	case e.Service != "" && e.Route != "":
		return e.Service + "/" + e.Route
	case e.Service != "":
		return e.Service
	case e.Route != "":
		return e.Route
	}
	return e.Name
}

// event audits and logs one event, an alert event with its annotations
// rendered (Policy.EventText).
func (s *Stage) event(e evaluator.Event) {
	e.Time = e.Time.UTC()
	s.audit.Write(e)
	switch e.Type {
	case evaluator.EventLevel, evaluator.EventFailback:
		attrs := []any{"service", e.Service, "route", e.Route, "from", e.From, "to", e.To}
		attrs = appendSet(attrs, "stage", e.Stage)
		attrs = appendSet(attrs, "percent", e.Percent)
		attrs = appendSet(attrs, "score", e.Score)
		s.log.Info("route "+e.Type, append(attrs, "reasons", e.Reasons)...)
	case evaluator.EventTraffic:
		s.log.Info("traffic split", "service", e.Service, "weights", e.Weights)
	case evaluator.EventAlert:
		s.log.Info("alert "+e.State, "alert", e.Name, "tier", e.Tier, "service", e.Service, "route", e.Route)
	case evaluator.EventDrill:
		attrs := []any{"route", e.Route, "kind", e.Drill.Kind, "since_injection", e.Time.Sub(e.Drill.Injected), "dry_run", e.Drill.DryRun, "reasons", e.Reasons}
		s.log.Info("drill "+e.State, appendSet(attrs, "until", e.Expires)...)
	case evaluator.EventOverride, evaluator.EventCommand:
		attrs := []any{"kind", e.Name, "service", e.Service, "route", e.Route, "reasons", e.Reasons, "by", e.By}
		s.log.Info(e.Type+" "+e.State, appendSet(attrs, "expires", e.Expires)...)
	}
}

// appendSet appends key and the value p points to, when p is set: log
// lines print values, never pointers.
func appendSet[T any](attrs []any, key string, p *T) []any {
	if p == nil {
		return attrs
	}
	return append(attrs, key, *p)
}
