// Package webtest holds a web.Loop for tests of the admin API and of its
// clients (hermes ctl): the commands go through the core's own rules, so
// what a test sees refused or applied is what a running Hermes would do.
package webtest

import (
	"context"
	"sync"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/runner"
	"github.com/hermes-failover/hermes/web/api"
)

// Clock is the time at which a CoreLoop applies every command; web tests
// give the handler the same clock (Options.Now).
var Clock = time.Unix(1000, 0)

// CoreLoop is a web.Loop that applies each command with evaluator.Apply on
// Policy at Clock and keeps the resulting state; it has no status, past
// or reload of its own.
type CoreLoop struct {
	Policy *evaluator.Policy

	mu    sync.Mutex
	state evaluator.State
}

// NewCoreLoop is a CoreLoop over p, from an empty state.
func NewCoreLoop(p *evaluator.Policy) *CoreLoop { return &CoreLoop{Policy: p} }

// Override is the override of service as the applied commands left it.
func (c *CoreLoop) Override(service string) evaluator.Override {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state.Overrides[service]
}

// Submit applies cmd at Clock; the core's refusal is the command's error.
func (c *CoreLoop) Submit(_ context.Context, cmd evaluator.Command) (runner.CommandResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	next, evs, err := evaluator.Apply(c.Policy, c.state, cmd, Clock)
	if err != nil {
		return runner.CommandResult{}, err
	}
	c.state = next
	return runner.CommandResult{Applied: true, Tick: Clock, Events: evs}, nil
}

// Ready is true: commands apply at once.
func (c *CoreLoop) Ready() bool { return true }

// Status is an empty, ready status: these tests read what the commands
// did through Override.
func (c *CoreLoop) Status() api.Status { return api.Status{Ready: true, Ticked: true, LastTick: Clock} }

// Reload does nothing.
func (c *CoreLoop) Reload(context.Context) error { return nil }

// History is empty: the loop has no past.
func (c *CoreLoop) History(context.Context, time.Time) ([]evaluator.Tick, []evaluator.Event, string) {
	return nil, nil, "memory"
}

// Actuations is empty, like History.
func (c *CoreLoop) Actuations(context.Context, time.Time) ([]evaluator.Actuation, string) {
	return nil, "memory"
}
