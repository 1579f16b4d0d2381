package runner

import (
	"context"
	"time"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/promapi"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/runner/alerting"
)

// stage is one step of a tick after evaluator.Step, as a notify.Stage is
// one of Alertmanager's pipeline: it owns its state, its metrics and the
// lock over them, and learns of the tick only from the tickResult it is
// handed. No stage reads another's state; what a later step needs of an
// earlier one travels in the tickResult.
type stage interface {
	Tick(ctx context.Context, t *tickResult)
}

// stageFunc is a stage without state of its own.
type stageFunc func(ctx context.Context, t *tickResult)

// Tick calls f.
func (f stageFunc) Tick(ctx context.Context, t *tickResult) { f(ctx, t) }

// tickResult is what one tick computed, handed to every stage in order.
type tickResult struct {
	// Time is the tick's aligned time.
	Time time.Time
	// Config, Policy and Actuators are the configuration the tick ran
	// with; a reload during the tick takes effect at the next one.
	Config    *config.Config
	Policy    *evaluator.Policy
	Actuators []actuators.Actuator
	// Query is the tick's query side, for a stage that collects more
	// (the candidate policy's own signals).
	Query promapi.RouteQueryFunc
	// Snapshot is what the queries answered; Data reports whether at
	// least one of them answered (a value or no sample, not an error).
	Snapshot evaluator.Snapshot
	Data     bool
	// UnknownSplits are the services whose split Hermes did not know when
	// the tick began (evaluator.Input.UnknownSplits): their split in Next
	// is the core's placeholder unless an override gives it.
	UnknownSplits map[string]bool
	// Prev is the state before the tick, Next the one Step returned with
	// Events.
	Prev, Next evaluator.State
	Events     []evaluator.Event
	// commands are the operator commands the tick applied, answered by
	// the loop's own stage (answerCommands).
	commands []*pendingCommand

	// IncidentStarts are the alerting stage's kept startsAt after the
	// tick before (alerting.Sender.IncidentStarts), for the restart
	// memory, which runs first.
	IncidentStarts []alerting.IncidentStart

	// Actuations are what the actuation stage saw the backends do this
	// tick (a changed split, the first failure), for the loop's memory.
	Actuations []evaluator.Actuation
}
