package alerting

import (
	"slices"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/rules"
)

// MetricAlertActiveSince is the series that carries alert state across
// restarts, one per pending or firing alert; its value is the Unix time the
// alert became active (like Prometheus's ALERTS_FOR_STATE).
const MetricAlertActiveSince = "hermes_alert_active_since_timestamp_seconds"

// activeSinceLabels are the labels of MetricAlertActiveSince: the alert's
// identity (alertname, service, route), what people filter on (tier,
// severity), and level, the one label whose value Restore cannot derive
// from the configuration. Other labels come from the alert rule.
var activeSinceLabels = []string{"alertname", "service", "route", "tier", "severity", "level"}

// tierSeverity is the severity label of each tier; the evaluator sets the
// same (Restore rebuilds labels with it).
var tierSeverity = map[string]string{rules.TierA: "critical", rules.TierB: "warning", rules.TierC: "info"}

// export sets the active-since series of every pending or firing alert and
// deletes those of alerts that are no longer active; s.mu is held.
func (s *Sender) export(alerts map[string]*evaluator.AlertState) {
	seen := map[string]bool{}
	for k, as := range alerts {
		if as.Status != evaluator.AlertPending && as.Status != evaluator.AlertFiring {
			continue
		}
		vals := activeSinceValues(as)
		if old, ok := s.exported[k]; ok && !slices.Equal(old, vals) {
			s.metrics.activeSince.DeleteLabelValues(old...)
		}
		s.metrics.activeSince.WithLabelValues(vals...).Set(float64(as.ActiveAt.UnixMilli()) / 1000)
		s.exported[k] = vals
		seen[k] = true
	}
	for k, vals := range s.exported {
		if !seen[k] {
			s.metrics.activeSince.DeleteLabelValues(vals...)
			delete(s.exported, k)
		}
	}
}

// activeSinceValues are the values of activeSinceLabels for as.
func activeSinceValues(as *evaluator.AlertState) []string {
	fallback := map[string]string{"alertname": as.Rule, "service": as.Service, "route": as.Route,
		"tier": as.Tier, "severity": tierSeverity[as.Tier]}
	vals := make([]string, len(activeSinceLabels))
	for i, l := range activeSinceLabels {
		v, ok := as.Labels[l]
		if !ok {
			v = fallback[l]
		}
		vals[i] = v
	}
	return vals
}
