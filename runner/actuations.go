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

// appliedAfter is what actuator a's backend holds after a successful
// apply of desired: what Compare read back, or, when the backend could
// not be read, what was applied, for the services a handles.
func appliedAfter(a actuators.Actuator, desired, readBack actuators.Splits, readErr error) actuators.Splits {
	if readErr != nil || readBack == nil {
		return actuators.Handled(a, desired)
	}
	return readBack
}

// noteActuation exports what actuator name's backend holds, when it last
// took a new split and since when it fails (persist.MetricActuator*,
// which persist.Actuations reads back for the charts), and returns for
// the in-memory history the same actuations: an apply that changed a
// service's split (at the time it returned, at), and the first failure
// after success (failingSince equal to the tick at). applied is nil when
// the apply failed with applyErr.
func (s *actuationStage) noteActuation(name string, at time.Time, applied actuators.Splits, failingSince time.Time, applyErr error) []evaluator.Actuation {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []evaluator.Actuation
	prev := s.applied[name]
	if applyErr != nil {
		s.metrics.failingSince.WithLabelValues(name).Set(float64(failingSince.UnixMilli()) / 1e3)
		if !failingSince.Equal(at) {
			return nil // still failing: marked when it began
		}
		services := slices.Sorted(maps.Keys(prev))
		if len(services) == 0 {
			services = []string{""}
		}
		for _, svc := range services {
			out = append(out, evaluator.Actuation{Time: failingSince.UTC(), Actuator: name, Service: svc, Result: evaluator.ActuationFailed, Error: applyErr.Error()})
		}
		return out
	}
	s.metrics.failingSince.WithLabelValues(name).Set(0)
	for svc, old := range prev {
		for route := range old.Weights {
			if _, ok := applied[svc].Weights[route]; !ok {
				s.metrics.applied.DeleteLabelValues(name, svc, route)
			}
		}
	}
	for _, svc := range slices.Sorted(maps.Keys(applied)) {
		w := applied[svc].Weights
		for route, pct := range w {
			s.metrics.applied.WithLabelValues(name, svc, route).Set(float64(pct) / 100)
		}
		if old, ok := prev[svc]; ok && !maps.Equal(old.Weights, w) {
			s.metrics.changed.WithLabelValues(name, svc).Set(float64(at.UnixMilli()) / 1e3)
			out = append(out, evaluator.Actuation{Time: at.UTC(), Actuator: name, Service: svc, Weights: maps.Clone(w), Result: evaluator.ActuationApplied})
		}
	}
	s.applied[name] = applied
	return out
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

// forget drops what the stage keeps and exports of actuators not in
// acts, which a reload removed: their series (which would otherwise stay
// at their last values until Hermes restarts), their outcome and what
// their backends held.
func (s *actuationStage) forget(acts []actuators.Actuator) {
	s.mu.Lock()
	defer s.mu.Unlock()
	keep := make(map[string]bool, len(acts))
	for _, a := range acts {
		keep[a.Name()] = true
	}
	gone := map[string]bool{}
	for name := range s.outcomes {
		gone[name] = !keep[name]
	}
	for name := range s.applied {
		gone[name] = !keep[name]
	}
	for name, g := range gone {
		if !g {
			continue
		}
		delete(s.outcomes, name)
		delete(s.applied, name)
		delete(s.lastDesired, name)
		delete(s.leases, name)
		l := prometheus.Labels{persist.ActuatorLabel: name}
		s.metrics.total.DeletePartialMatch(l)
		s.metrics.duration.DeletePartialMatch(l)
		s.metrics.drift.DeletePartialMatch(l)
		s.metrics.applied.DeletePartialMatch(l)
		s.metrics.changed.DeletePartialMatch(l)
		s.metrics.failingSince.DeletePartialMatch(l)
	}
}
