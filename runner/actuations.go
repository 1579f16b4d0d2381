package runner

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strconv"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/runner/persist"
)

// heldAfter is what actuator a's backend holds after a successful apply of
// desired: what Compare read back, or, when the backend could not be read,
// what was applied, for the services a handles.
func heldAfter(a actuators.Actuator, desired, holds actuators.Splits, readErr error) actuators.Splits {
	if readErr != nil || holds == nil {
		return actuators.Handled(a, desired)
	}
	return holds
}

// noteActuation exports what actuator name's backend holds, when it last
// took a new split and since when it fails (persist.MetricActuator*,
// which persist.Actuations reads back for the charts), and records in the
// in-memory history the same actuations: an apply that changed a
// service's split (at the time it returned, at), and the first failure
// after success (failingSince equal to the tick at). held is nil when the
// apply failed with applyErr.
func (r *Runner) noteActuation(name string, at time.Time, held actuators.Splits, failingSince time.Time, applyErr error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.held == nil {
		r.held = map[string]actuators.Splits{}
	}
	prev := r.held[name]
	if applyErr != nil {
		r.acts.failingSince.WithLabelValues(name).Set(float64(failingSince.UnixMilli()) / 1e3)
		if !failingSince.Equal(at) {
			return // still failing: marked when it began
		}
		services := slices.Sorted(maps.Keys(prev))
		if len(services) == 0 {
			services = []string{""}
		}
		for _, svc := range services {
			r.history.AddActuation(evaluator.Actuation{Time: failingSince.UTC(), Actuator: name, Service: svc, Result: evaluator.ActuationFailed, Error: applyErr.Error()})
		}
		return
	}
	r.acts.failingSince.WithLabelValues(name).Set(0)
	for svc, old := range prev {
		for route := range old.Weights {
			if _, ok := held[svc].Weights[route]; !ok {
				r.acts.held.DeleteLabelValues(name, svc, route)
			}
		}
	}
	for _, svc := range slices.Sorted(maps.Keys(held)) {
		w := held[svc].Weights
		for route, pct := range w {
			r.acts.held.WithLabelValues(name, svc, route).Set(float64(pct) / 100)
		}
		if old, ok := prev[svc]; ok && !maps.Equal(old.Weights, w) {
			r.acts.changed.WithLabelValues(name, svc).Set(float64(at.UnixMilli()) / 1e3)
			r.history.AddActuation(evaluator.Actuation{Time: at.UTC(), Actuator: name, Service: svc, Weights: maps.Clone(w), Result: evaluator.ActuationApplied})
		}
	}
	r.held[name] = held
}

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

// forgetActuators drops what the runner keeps and exports of actuators not
// in acts, which a reload removed: their series (which would otherwise stay
// at their last values until Hermes restarts), their status and what they
// held. r.mu is held.
func (r *Runner) forgetActuators(acts []actuators.Actuator) {
	keep := make(map[string]bool, len(acts))
	for _, a := range acts {
		keep[a.Name()] = true
	}
	gone := map[string]bool{}
	for name := range r.lastActs {
		gone[name] = !keep[name]
	}
	for name := range r.held {
		gone[name] = !keep[name]
	}
	for name, g := range gone {
		if !g {
			continue
		}
		delete(r.lastActs, name)
		delete(r.held, name)
		delete(r.lastDesired, name)
		l := prometheus.Labels{persist.ActuatorLabel: name}
		r.acts.total.DeletePartialMatch(l)
		r.acts.duration.DeletePartialMatch(l)
		r.acts.drift.DeletePartialMatch(l)
		r.acts.held.DeletePartialMatch(l)
		r.acts.changed.DeletePartialMatch(l)
		r.acts.failingSince.DeletePartialMatch(l)
	}
}
