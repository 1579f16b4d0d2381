package runner

import (
	"time"

	"github.com/hermes-failover/hermes/evaluator"
)

// auditRecord is an actuation, reload or operator action; core decisions
// are written as evaluator.Event.
type auditRecord struct {
	Time     time.Time      `json:"time"`
	Type     string         `json:"type"`
	Actuator string         `json:"actuator,omitempty"`
	Service  string         `json:"service,omitempty"`
	Route    string         `json:"route,omitempty"`
	Weights  map[string]int `json:"weights,omitempty"`
	// Holds is what the backend holds after applying, when it differs
	// from Weights (a rate-limited step, a dry run).
	Holds  map[string]int `json:"holds,omitempty"`
	Result string         `json:"result,omitempty"`
	Error  string         `json:"error,omitempty"`
	Reason string         `json:"reason,omitempty"`
	By     string         `json:"by,omitempty"`
}

func (r *Runner) audit(e evaluator.Event) {
	e.Time = e.Time.UTC()
	if e.Type == evaluator.EventAlertError {
		// Every tick while it lasts: logged and counted, not audited.
		r.metrics.AlertEvalError(e.Name)
		r.log.Warn("alert expression failed; the alert counts as not holding", "alert", e.Name, "service", e.Service, "route", e.Route, "err", e.Reasons)
		return
	}
	r.opts.Audit.Write(e)
	switch e.Type {
	case evaluator.EventLevel, evaluator.EventFailback:
		attrs := []any{"service", e.Service, "route", e.Route, "from", e.From, "to", e.To}
		attrs = appendSet(attrs, "stage", e.Stage)
		attrs = appendSet(attrs, "percent", e.Percent)
		attrs = appendSet(attrs, "score", e.Score)
		r.log.Info("route "+e.Type, append(attrs, "reasons", e.Reasons)...)
	case evaluator.EventTraffic:
		r.log.Info("traffic split", "service", e.Service, "weights", e.Weights)
	case evaluator.EventAlert:
		r.log.Info("alert "+e.State, "alert", e.Name, "tier", e.Tier, "service", e.Service, "route", e.Route)
	case evaluator.EventDrill:
		attrs := []any{"route", e.Route, "kind", e.Drill.Kind, "since_injection", e.Time.Sub(e.Drill.Injected), "dry_run", e.Drill.DryRun, "reasons", e.Reasons}
		r.log.Info("drill "+e.State, appendSet(attrs, "until", e.Expires)...)
	case evaluator.EventOverride, evaluator.EventCommand:
		attrs := []any{"kind", e.Name, "service", e.Service, "route", e.Route, "reasons", e.Reasons, "by", e.By}
		r.log.Info(e.Type+" "+e.State, appendSet(attrs, "expires", e.Expires)...)
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
