package actuation

import (
	"maps"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/labelname"
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
// took a new split and since when it fails (package series's names,
// which the persist stage reads back for the charts), and returns for
// the in-memory history the same actuations: an apply that changed a
// service's split (at the time it returned, at), and the first failure
// after success (failingSince equal to the tick at). applied is nil when
// the apply failed with applyErr.
func (s *Stage) noteActuation(name string, at time.Time, applied actuators.Splits, failingSince time.Time, applyErr error) []evaluator.Actuation {
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

// Forget drops what the stage keeps and exports of actuators not in
// acts, which a reload removed: their series (which would otherwise stay
// at their last values until Hermes restarts), their outcome and what
// their backends held.
func (s *Stage) Forget(acts []actuators.Actuator) {
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
		l := prometheus.Labels{labelname.Actuator: name}
		s.metrics.total.DeletePartialMatch(l)
		s.metrics.duration.DeletePartialMatch(l)
		s.metrics.drift.DeletePartialMatch(l)
		s.metrics.applied.DeletePartialMatch(l)
		s.metrics.changed.DeletePartialMatch(l)
		s.metrics.failingSince.DeletePartialMatch(l)
	}
}

// ShiftClock moves the actuators' outcomes (when each was last applied,
// since when it fails) by a wall-clock jump (the loop's clock.go). Outcome
// has no other time; a time added to it must be moved here too.
func (s *Stage) ShiftClock(jump time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	shift := func(t time.Time) time.Time {
		if t.IsZero() {
			return t
		}
		return t.Add(jump)
	}
	for name, o := range s.outcomes {
		o.At, o.FailingSince = shift(o.At), shift(o.FailingSince)
		s.outcomes[name] = o
	}
}
