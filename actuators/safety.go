package actuators

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/hermes-failover/hermes/traffic"
)

// Safety refuses, with an error and without applying anything, a desired
// state that fails CheckSafety. It is the outermost wrapper Build puts
// around every backend: a bug upstream must not reach a load balancer.
func Safety(a Actuator) Actuator { return &safety{a: a} }

type safety struct{ a Actuator }

func (s *safety) Name() string     { return s.a.Name() }
func (s *safety) Unwrap() Actuator { return s.a }

func (s *safety) Apply(ctx context.Context, desired Splits) error {
	if err := CheckSafety(desired); err != nil {
		return fmt.Errorf("refusing an unsafe desired state, nothing applied: %w", err)
	}
	return s.a.Apply(ctx, desired)
}

func (s *safety) Current(ctx context.Context) (Splits, error) { return s.a.Current(ctx) }

// CheckSafety reports every service of d whose weights do not sum to 100,
// hold a negative weight, or give 100 % to a route whose Levels entry is
// failover or manual (traffic.Level.Failed) while Degraded is unset and no
// operator pinned or paused it (a pause keeps the split a person froze,
// and the runner alerts while it holds traffic on a failed route; only a degraded service, every route of which is
// bad, may send everything to a failed route; a route being failed back is
// traffic.Failback, which may get 100 %), or give traffic to a route that
// is not one of the service's (Levels names every route of the service the
// core planned; a route missing from it, say one a reload removed, must
// get nothing). The error is permanent (not retryable).
func CheckSafety(d Splits) error {
	var errs []error
	for _, svc := range slices.Sorted(maps.Keys(d)) {
		st := d[svc]
		sum := 0
		for _, r := range slices.Sorted(maps.Keys(st.Weights)) {
			w := st.Weights[r]
			sum += w
			if w < 0 {
				errs = append(errs, fmt.Errorf("service %s: route %s has a negative weight (%d)", svc, r, w))
			}
			if _, ok := st.Levels[r]; w > 0 && st.Levels != nil && !ok {
				errs = append(errs, fmt.Errorf("service %s: route %s is not a route of the service (routes %v) but would get %d%% of the traffic", svc, r, slices.Sorted(maps.Keys(st.Levels)), w))
			}
			if w >= 100 && st.Levels[r].Failed() && !st.Degraded && st.Override != traffic.Pin && st.Override != traffic.Pause {
				errs = append(errs, fmt.Errorf("service %s: route %s is at level %s but would get %d%% of the traffic without degraded mode", svc, r, st.Levels[r], w))
			}
		}
		if sum != 100 {
			errs = append(errs, fmt.Errorf("service %s: weights %v sum to %d, want 100", svc, st.Weights, sum))
		}
	}
	return errors.Join(errs...)
}
