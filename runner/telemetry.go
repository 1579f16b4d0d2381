package runner

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/runner/telemetry"
)

// telemetryStage exports each tick's state as Hermes's own series
// (telemetry.Metrics, which owns them and their lock): the saved series
// the persist stage reads back at a restart, and the fleet's gauges. It
// also counts the alert expressions that failed. The loop's own series
// (tick duration, skipped ticks, reloads) are on the same Metrics.
type telemetryStage struct {
	metrics *telemetry.Metrics
	// wallJumps counts the wall-clock jumps the loop saw (clock.go).
	wallJumps prometheus.Counter
}

// Tick exports the tick's state and counts its alert errors.
func (s *telemetryStage) Tick(_ context.Context, t *tickResult) {
	s.metrics.Update(t.Policy, t.Next, t.Snapshot, t.Time)
	for _, e := range t.Events {
		if e.Type == evaluator.EventAlertError {
			s.metrics.AlertEvalError(e.Name)
		}
	}
}

// The loop's own series (tick duration, skipped ticks, reloads), which
// telemetry.Metrics exports beside the state.

func (s *telemetryStage) observeTick(took time.Duration, tick time.Time) {
	s.metrics.ObserveTick(took, tick)
}

func (s *telemetryStage) tickSkipped() { s.metrics.TickSkipped() }

func (s *telemetryStage) configReload(ok bool, at time.Time) { s.metrics.ConfigReload(ok, at) }

func (s *telemetryStage) reloadRequested() { s.metrics.ReloadRequested() }
