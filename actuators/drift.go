package actuators

import "context"

// Drift reports whether the backend of a holds, for some service of
// desired that a handles, a state other than desired (traffic.Split.Equal:
// weights and flags; a service the backend lacks counts as drift). When a
// comes from Registry.Build it knows its services and desired may hold
// every service; for a bare backend, pass Filter(desired, services).
//
// Drift is as good as a's Current: nginx with state_listen reports what
// nginx serves; a backend that cannot be read back (a webhook) reports the
// state its receiver acknowledged, so a failed Apply, or one whose outcome
// is unknown, shows as drift. On a dry-run actuator Drift reports true: the
// backend does not hold the decision. (A rate limit's step is the decision:
// the core plans it, so a backend that took it shows no drift.)
func Drift(ctx context.Context, a Actuator, desired Splits) (bool, error) {
	_, drift, err := Compare(ctx, a, desired)
	return drift, err
}

// Compare is Drift that also returns what the backend holds (for a's
// services), so a caller can record it.
func Compare(ctx context.Context, a Actuator, desired Splits) (Splits, bool, error) {
	desired = Handled(a, desired)
	current, err := a.Current(ctx)
	if err != nil {
		return nil, false, err
	}
	for svc, want := range desired {
		if have, ok := current[svc]; !ok || !have.Equal(want) {
			return current, true, nil
		}
	}
	return current, false, nil
}

// Handled keeps the services of desired that a handles: those of its
// services: list when it comes from Registry.Build, else all.
func Handled(a Actuator, desired Splits) Splits {
	if s, ok := a.(interface{ Services() []string }); ok {
		return Filter(desired, s.Services())
	}
	return desired
}
