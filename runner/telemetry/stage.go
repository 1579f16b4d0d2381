package telemetry

import (
	"context"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/runner/tick"
)

// Stage is the telemetry stage of the live loop: it exports each tick's
// state as Hermes's own series (Metrics, which owns them and their lock),
// the fleet's gauges; the saved series the persist stage reads back at a
// restart are that stage's. It also counts the alert expressions that
// failed. The loop's own series (tick duration, skipped ticks, reloads,
// wall-clock jumps) are on the same stage. It reads the tick's Result
// and its own state only; its methods are safe for concurrent use.
type Stage struct {
	metrics *Metrics
	// wallJumps counts the wall-clock jumps the loop saw.
	wallJumps prometheus.Counter
}

// NewStage registers the stage's series on reg.
func NewStage(reg prometheus.Registerer, opts Options) *Stage {
	return &Stage{metrics: New(reg, opts), wallJumps: newWallJumps(reg)}
}

// newWallJumps is hermes_wall_clock_jumps_total, which the stage keeps
// with the loop's other series.
func newWallJumps(reg prometheus.Registerer) prometheus.Counter {
	c := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "hermes_wall_clock_jumps_total",
		Help: "Times the wall clock moved more than a second apart from the monotonic clock between two ticks; the state's times were moved with it, so timers count the time that really passed.",
	})
	reg.MustRegister(c)
	return c
}

// Tick exports the tick's state and counts its alert errors.
func (s *Stage) Tick(_ context.Context, t *tick.Result) {
	s.metrics.update(t.Policy, t.Next, t.Snapshot, t.Time, !t.NoErrorSamples)
	for _, e := range t.Events {
		if e.Type == evaluator.EventAlertError {
			s.metrics.AlertEvalError(e.Name)
		}
	}
}

// The loop's own series (tick duration, skipped ticks, reloads, wall-clock
// jumps), which the stage exports beside the state.

// ObserveTick counts the tick at at, which took took.
func (s *Stage) ObserveTick(took time.Duration, at time.Time) {
	s.metrics.ObserveTick(took, at)
}

// TickSkipped counts a tick the loop skipped after an overrun.
func (s *Stage) TickSkipped() { s.metrics.TickSkipped() }

// ConfigReload counts a reload at at, applied (ok) or rejected.
func (s *Stage) ConfigReload(ok bool, at time.Time) { s.metrics.ConfigReload(ok, at) }

// ReloadRequested counts a request to reload.
func (s *Stage) ReloadRequested() { s.metrics.ReloadRequested() }

// WallJumped counts a jump of the wall clock.
func (s *Stage) WallJumped() { s.wallJumps.Inc() }
