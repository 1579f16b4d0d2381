package runner

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/runner/persist"
)

// Actuations returns the actuations since t, oldest first, from Hermes's
// own series in Prometheus (source "prometheus"), with the error messages
// this process saw, or from this process's memory (source "memory") when
// Prometheus cannot answer or holds none of the series yet.
func (r *Runner) Actuations(ctx context.Context, since time.Time) ([]evaluator.Actuation, string) {
	r.mu.Lock()
	mem := r.history.Actuations(since)
	r.mu.Unlock()
	var acts []evaluator.Actuation
	err := r.readHistory(ctx, since, func(ctx context.Context, api v1.API, from, to time.Time, step time.Duration) error {
		var found bool
		var err error
		acts, found, err = persist.Actuations(ctx, api, from, to, step, r.opts.Restore)
		if err == nil && !found {
			err = errors.New("no actuator series in Prometheus yet")
		}
		return err
	})
	if err != nil {
		return mem, "memory"
	}
	why := map[string]string{}
	for _, a := range mem {
		if a.Result == evaluator.ActuationFailed {
			why[a.Actuator+"@"+strconv.FormatInt(a.Time.Unix(), 10)] = a.Error
		}
	}
	for i, a := range acts {
		if a.Result == evaluator.ActuationFailed {
			acts[i].Error = why[a.Actuator+"@"+strconv.FormatInt(a.Time.Unix(), 10)]
		}
	}
	return withRecent(acts, mem), "prometheus"
}

// withRecent adds to acts, read from Prometheus, the actuations of mem
// (this process's) that are newer than every one acts has of their
// actuator: Prometheus holds an actuation only once it has scraped Hermes
// after it, so the page would otherwise miss the latest move for up to a
// scrape interval.
func withRecent(acts, mem []evaluator.Actuation) []evaluator.Actuation {
	newest := map[string]time.Time{}
	for _, a := range acts {
		if a.Time.After(newest[a.Actuator]) {
			newest[a.Actuator] = a.Time
		}
	}
	n := len(acts)
	for _, a := range mem {
		if a.Time.After(newest[a.Actuator]) {
			acts = append(acts, a)
		}
	}
	if len(acts) > n {
		slices.SortStableFunc(acts, func(a, b evaluator.Actuation) int { return a.Time.Compare(b.Time) })
	}
	return acts
}
