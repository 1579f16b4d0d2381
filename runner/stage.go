package runner

import (
	"context"

	"github.com/hermes-failover/hermes/runner/tick"
)

// stage is one step of a tick after evaluator.Step (tick.Stage), as the
// loop runs it: the loop's own steps in package runner (the answers to
// the tick's commands, the candidate's shadow) also see the loop's own
// part of the result, the commands the tick applied.
type stage interface {
	Tick(ctx context.Context, t *tickResult)
}

// stageFunc is a stage without state of its own.
type stageFunc func(ctx context.Context, t *tickResult)

// Tick calls f.
func (f stageFunc) Tick(ctx context.Context, t *tickResult) { f(ctx, t) }

// ownPackage is a stage of a package of its own (persist, telemetry,
// audit, actuation, alerting), which sees the tick's Result and nothing
// of the loop's.
type ownPackage struct{ tick.Stage }

// Tick hands s the tick's Result.
func (s ownPackage) Tick(ctx context.Context, t *tickResult) { s.Stage.Tick(ctx, &t.Result) }

// tickResult is what one tick computed (tick.Result) and the operator
// commands it applied, answered by the loop's own stage (answerCommands).
type tickResult struct {
	tick.Result
	commands []*pendingCommand
	// problems are the tick's failed signal queries, which publish shows.
	problems []SignalProblem
}
