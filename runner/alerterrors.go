package runner

import (
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/rules"
)

// AlertError is the last run-time failure of one alert rule's expression
// (evaluator.EventAlertError: a division by zero, a result that is not a
// bool); the alert counted as not holding. They are counted in
// hermes_alert_eval_errors_total and logged; this is what the status page
// and API show of them.
type AlertError struct {
	Alert string
	// Service and Route are the target of the last failure.
	Service, Route string
	Error          string
	// At is the tick of the last failure, Since the first of this process.
	At, Since time.Time
	// Count is how many evaluations failed in this process.
	Count int
}

// noteAlertErrors keeps the alert errors among the events of one tick, the
// last one by alert. The caller holds r.mu.
func (r *Runner) noteAlertErrors(events []evaluator.Event) {
	for _, e := range events {
		if e.Type != evaluator.EventAlertError {
			continue
		}
		ae := r.alertErrors[e.Name]
		if ae.Count == 0 {
			ae.Since = e.Time
		}
		ae.Alert, ae.Service, ae.Route, ae.At = e.Name, e.Service, e.Route, e.Time
		ae.Error = strings.Join(e.Reasons, "; ")
		ae.Count++
		r.alertErrors[e.Name] = ae
	}
}

// viewAlertErrors returns the kept alert errors of the rules the
// configuration still has, by alert name. The caller holds r.mu.
func (r *Runner) viewAlertErrors() []AlertError {
	var out []AlertError
	for _, name := range slices.Sorted(maps.Keys(r.alertErrors)) {
		if r.cfg != nil && !slices.ContainsFunc(r.cfg.Alerts, func(a rules.AlertRuleConfig) bool { return a.Name == name }) {
			continue // removed by a reload
		}
		out = append(out, r.alertErrors[name])
	}
	return out
}
