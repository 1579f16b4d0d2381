package runner

import (
	"context"
	"errors"
	"strconv"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
)

// pendingCommand is an operator command waiting for its tick.
type pendingCommand struct {
	cmd  evaluator.Command
	done chan commandOutcome // buffered: the tick never blocks on it
}

// commandQueue holds the operator commands between Submit and their tick.
type commandQueue struct {
	// pending are the commands the next tick applies, in order.
	pending []*pendingCommand
	// inflight are the commands the running tick took, until it stores
	// its state: Submit checks a new command against them too.
	inflight []*pendingCommand
	nextID   uint64
}

// take hands the pending commands to a tick, which holds them in flight.
func (q *commandQueue) take() []*pendingCommand {
	cmds := q.pending
	q.pending, q.inflight = nil, cmds
	return cmds
}

// putBack queues the commands of a dropped tick again, first.
func (q *commandQueue) putBack(cmds []*pendingCommand) {
	q.pending, q.inflight = append(cmds, q.pending...), nil
}

// commandsOf are the core's commands of cmds.
func commandsOf(cmds []*pendingCommand) []evaluator.Command {
	out := make([]evaluator.Command, len(cmds))
	for i, c := range cmds {
		out[i] = c.cmd
	}
	return out
}

type commandOutcome struct {
	result CommandResult
	err    error
}

// Submit queues an operator command for the next tick, which applies it
// before judging the routes (so no tick undoes it), and waits for that
// tick. A command that cannot apply to the state as it will be (the
// current state with the commands of a tick in flight and those already
// queued) is refused at once.
//
// Submit returns when the tick applied the command, with its events; or,
// when ctx ends first or the tick is more than an evaluation interval late
// (a slow Prometheus), with Applied false and the tick it is queued for: the
// command stays queued and will be applied.
func (r *Runner) Submit(ctx context.Context, cmd evaluator.Command) (CommandResult, error) {
	r.mu.Lock()
	now := r.opts.Now()
	s := r.state
	for _, p := range append(r.cmds.inflight, r.cmds.pending...) {
		if next, _, err := evaluator.Apply(r.pol, s, p.cmd, now); err == nil {
			s = next
		}
	}
	if err := evaluator.Check(r.pol, s, cmd); err != nil {
		r.mu.Unlock()
		return CommandResult{}, err
	}
	r.cmds.nextID++
	cmd.ID = strconv.FormatUint(r.cmds.nextID, 10)
	p := &pendingCommand{cmd: cmd, done: make(chan commandOutcome, 1)}
	r.cmds.pending = append(r.cmds.pending, p)
	interval := r.cfg.Global.EvaluationInterval
	r.mu.Unlock()

	tick := now.Truncate(interval).Add(interval)
	late := time.NewTimer(tick.Add(interval).Sub(now))
	defer late.Stop()
	select {
	case o := <-p.done:
		return o.result, o.err
	case <-late.C:
	case <-ctx.Done():
	}
	return CommandResult{Applied: false, Tick: tick}, nil
}

// answerCommands is the loop's own stage: it answers the commands of
// tick t, after the persist stage saved what they changed.
func answerCommands(_ context.Context, t *tickResult) { answer(t.commands, t.Events, t.Time) }

// answer tells every waiting Submit what its tick did with its command.
func answer(cmds []*pendingCommand, events []evaluator.Event, tick time.Time) {
	for _, p := range cmds {
		o := commandOutcome{result: CommandResult{Applied: true, Tick: tick}}
		for _, e := range events {
			if e.Command != p.cmd.ID {
				continue
			}
			if e.Type == evaluator.EventCommand {
				o.err = errors.New(e.Reasons[0])
				o.result.Applied = false
			}
			o.result.Events = append(o.result.Events, e)
		}
		p.done <- o
	}
}

// CommandResult is what became of an operator command: applied by a tick
// (its events say what changed), or still queued for the tick at Tick
// when the caller could not wait for it.
type CommandResult struct {
	// Applied is false while the command waits for its tick, or when the
	// tick refused it.
	Applied bool
	// Tick is the tick that applied it, or the one it will apply at.
	Tick   time.Time
	Events []evaluator.Event
}
