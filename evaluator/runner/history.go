package runner

import (
	"context"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/evaluator/persist"
	"github.com/hermes-failover/hermes/evaluator/promapi"
)

// The in-memory history: 6 hours of ticks at the default 15 s interval,
// and the last events (level changes, alerts, traffic, overrides).
const (
	historyTicks  = 1440
	historyEvents = 500
)

// historyTimeout bounds the range queries of one status page.
const historyTimeout = 3 * time.Second

// History returns the ticks since t, oldest first, from Hermes's own series
// in Prometheus (so they survive restarts and merge replicas; source
// "prometheus"), or from what this process evaluated when Prometheus cannot
// answer (source "memory"); and the recent events this process saw.
func (r *Runner) History(ctx context.Context, since time.Time) (ticks []evaluator.Tick, events []evaluator.Event, source string) {
	r.mu.Lock()
	cfg, now := r.cfg, r.lastTick
	memTicks, memEvents := r.history.Since(since)
	r.mu.Unlock()
	if !now.IsZero() {
		if api, err := promapi.NewAPI(cfg.Prometheus); err == nil {
			qctx, cancel := context.WithTimeout(ctx, historyTimeout)
			defer cancel()
			ticks, err := persist.History(qctx, api, since.Truncate(cfg.Global.EvaluationInterval), now, cfg.Global.EvaluationInterval, r.opts.Restore)
			if err == nil && len(ticks) > 0 {
				return ticks, memEvents, "prometheus"
			}
			if err != nil {
				r.log.Debug("history from Prometheus failed; drawing this process's", "err", err)
			}
		}
	}
	return memTicks, memEvents, "memory"
}
