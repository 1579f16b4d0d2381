package actuators

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
)

// FanOut applies the desired state to several actuators (say, the gateways
// of one service) as one actuator called name. Apply calls each in a stable
// order, sorted by Name, goes on after a failure and returns the failures
// joined, one per failing actuator ("actuator nginx-edge: …"), so a partial
// failure says which part failed; the error is retryable if any part is.
//
// Current merges the answers: each service comes from the first actuator,
// in the same order, that answers without error and knows the service.
// When some actuators fail, it returns what the others answered together
// with their errors joined, so the caller can both use and report them;
// when every actuator fails, the state is nil.
func FanOut(name string, as ...Actuator) Actuator {
	sorted := slices.Clone(as)
	slices.SortStableFunc(sorted, func(a, b Actuator) int { return cmp.Compare(a.Name(), b.Name()) })
	return &fanOut{name: name, as: sorted}
}

type fanOut struct {
	name string
	as   []Actuator
}

func (f *fanOut) Name() string { return f.name }

// Unwrap returns the actuators, sorted by name.
func (f *fanOut) Unwrap() []Actuator { return slices.Clone(f.as) }

func (f *fanOut) Apply(ctx context.Context, desired Splits) error {
	var errs []error
	for _, a := range f.as {
		if err := a.Apply(ctx, desired); err != nil {
			errs = append(errs, fmt.Errorf("actuator %s: %w", a.Name(), err))
		}
	}
	return errors.Join(errs...)
}

func (f *fanOut) Current(ctx context.Context) (Splits, error) {
	var (
		out  Splits
		errs []error
	)
	for _, a := range f.as {
		d, err := a.Current(ctx)
		if err != nil {
			errs = append(errs, fmt.Errorf("actuator %s: %w", a.Name(), err))
			continue
		}
		if out == nil {
			out = Splits{}
		}
		for svc, st := range d {
			if _, seen := out[svc]; !seen {
				out[svc] = st
			}
		}
	}
	if out == nil && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if out == nil {
		out = Splits{}
	}
	return out, errors.Join(errs...)
}
