package telemetry

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/runner/persist"
)

// withSaved is Metrics beside the persist stage's Exporter on one
// registry, as `hermes run` registers them: the scrapes these tests read
// hold both the telemetry's series and the saved state's.
type withSaved struct {
	*Metrics
	saved *persist.Exporter
}

// newWithSaved registers both on reg.
func newWithSaved(reg prometheus.Registerer, o Options) *withSaved {
	return &withSaved{Metrics: New(reg, o), saved: persist.NewExporter(reg)}
}

// Update is what one tick exports: the telemetry stage's Update and the
// persist stage's Export, whose unknown services (split unknown) export no
// hermes_route_traffic_ratio.
func (m *withSaved) Update(pol *evaluator.Policy, s evaluator.State, snap evaluator.Snapshot, unknown map[string]bool, now time.Time) {
	m.Metrics.Update(pol, s, snap, now)
	m.saved.Export(pol, s, unknown, now)
}
