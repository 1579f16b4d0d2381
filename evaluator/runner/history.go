package runner

import (
	"time"

	"github.com/hermes-failover/hermes/evaluator"
)

// The in-memory history: 6 hours of ticks at the default 15 s interval,
// and the last events (level changes, alerts, traffic, overrides).
const (
	historyTicks  = 1440
	historyEvents = 500
)

// History returns the ticks and events since t that this process has
// evaluated, oldest first: the status page's charts when Prometheus cannot
// answer for Hermes's own series.
func (r *Runner) History(since time.Time) ([]evaluator.Tick, []evaluator.Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.history.Since(since)
}
