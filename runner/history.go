package runner

import (
	"context"
	"errors"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/runner/persist"
)

// The in-memory history: 6 hours of ticks at the default 15 s interval,
// and the last events (level changes, alerts, traffic, overrides).
const (
	historyTicks  = 1440
	historyEvents = 500
)

// History returns the ticks since t, oldest first, from Hermes's own series
// in Prometheus (so they survive restarts and merge replicas; source
// "prometheus"), or from what this process evaluated when Prometheus cannot
// answer (source "memory"); and the recent events this process saw.
func (r *Runner) History(ctx context.Context, since time.Time) (ticks []evaluator.Tick, events []evaluator.Event, source string) {
	r.mu.Lock()
	memTicks, memEvents := r.history.Since(since)
	r.mu.Unlock()
	err := r.readHistory(ctx, since, func(ctx context.Context, api v1.API, from, to time.Time, step time.Duration) error {
		var err error
		ticks, err = persist.History(ctx, api, from, to, step, r.opts.Restore)
		if err == nil && len(ticks) == 0 {
			err = errors.New("no tick in Prometheus yet")
		}
		return err
	})
	if err != nil {
		return memTicks, memEvents, "memory"
	}
	return ticks, memEvents, "prometheus"
}

// readHistory reads Hermes's own series from Prometheus for the status
// page, through the persist stage (persist.Stage.ReadSeries).
func (r *Runner) readHistory(ctx context.Context, since time.Time, read func(ctx context.Context, api v1.API, from, to time.Time, step time.Duration) error) error {
	r.mu.Lock()
	cfg, last := r.cfg, r.lastTick
	r.mu.Unlock()
	return r.stages.persist.ReadSeries(ctx, cfg, last, since, read)
}

// dryRunSplits are the splits the history keeps, by service, where they
// are not the plan: the split of a service a dry-run drill holds is the one
// the actuators keep (State.DryRunHold), not the plan nobody applied. A dry
// run's chart showed paid at 100 % while nginx never moved (issue 34); its
// plan is in the status (api.Service.Planned), marked as planned only.
// Without a drill there are none, and nothing is looked up per service.
func dryRunSplits(s evaluator.State) map[string]map[string]int {
	if len(s.Drills) == 0 {
		return nil
	}
	var out map[string]map[string]int
	for svc := range s.Services {
		if kept, ok := s.DryRunHold(svc); ok {
			if out == nil {
				out = map[string]map[string]int{}
			}
			out[svc] = kept.Weights
		}
	}
	return out
}
