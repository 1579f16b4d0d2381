package actuators

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"time"
)

// Keys every actuator accepts besides its own. Registry.Build takes them
// out of the options before calling the backend's factory, and wraps the
// backend according to them (see Wrap).
const (
	OptionDryRun = "dry_run"
	OptionRetry  = "retry"
)

// Defaults and bounds of the reserved keys.
const (
	DefaultRetryAttempts = 3           // when `retry:` is given without attempts
	DefaultRetryBackoff  = time.Second // when `retry:` is given without backoff
	MaxRetryAttempts     = 10
	MaxRetryBackoff      = time.Minute
)

// WrapOptions are the wrappers configured for one actuator:
//
//	actuators:
//	  - type: nginx
//	    dry_run: true            # log, apply nothing
//	    retry: {attempts: 3, backoff: 1s}
//
// (An actuator's max_shift_per_tick is not a wrapper: the core plans the
// steps it allows, rules.ActuatorConfig.MaxShiftPerTick.)
type WrapOptions struct {
	// DryRun logs what would be applied and applies nothing.
	DryRun bool `mapstructure:"dry_run"`
	// Retry retries retryable errors within a tick.
	Retry RetryOptions `mapstructure:"retry"`
	// Services are the services the actuator handles (all when empty); Build
	// sets them from the actuator's `services:`. Not a key.
	Services []string `mapstructure:"-"`
}

// RetryOptions configure Retry. Attempts of 0 or 1 mean no retry.
type RetryOptions struct {
	Attempts int           `mapstructure:"attempts"`
	Backoff  time.Duration `mapstructure:"backoff"`
}

// SplitWrapOptions takes the reserved keys out of an actuator's options. It
// returns them decoded (strictly, with the defaults of a `retry:` key that
// leaves out attempts or backoff) and validated, and the other keys in a
// new map, for the backend's factory; opts is not modified.
func SplitWrapOptions(opts map[string]any) (WrapOptions, map[string]any, error) {
	var (
		o        WrapOptions
		rest     map[string]any
		reserved = map[string]any{}
	)
	for k, v := range opts {
		switch k {
		case OptionDryRun, OptionRetry:
			reserved[k] = v
		default:
			if rest == nil {
				rest = map[string]any{}
			}
			rest[k] = v
		}
	}
	if _, ok := reserved[OptionRetry]; ok {
		o.Retry = RetryOptions{Attempts: DefaultRetryAttempts, Backoff: DefaultRetryBackoff}
	}
	if err := DecodeOptions(reserved, &o); err != nil {
		return WrapOptions{}, rest, err
	}
	if err := o.Validate(); err != nil {
		return WrapOptions{}, rest, err
	}
	return o, rest, nil
}

// Validate reports every problem of o, each naming its key.
func (o WrapOptions) Validate() error {
	var errs []error
	if o.Retry.Attempts < 0 || o.Retry.Attempts > MaxRetryAttempts {
		errs = append(errs, fmt.Errorf("%s.attempts: %d is out of range (want 1..%d)", OptionRetry, o.Retry.Attempts, MaxRetryAttempts))
	}
	if o.Retry.Backoff < 0 || o.Retry.Backoff > MaxRetryBackoff {
		errs = append(errs, fmt.Errorf("%s.backoff: %v is out of range (want 0s..%v)", OptionRetry, o.Retry.Backoff, MaxRetryBackoff))
	}
	return errors.Join(errs...)
}

// Wrap puts the wrappers o asks for around a backend, in this fixed order,
// outermost first:
//
//	services filter → Safety → Retry → DryRun → backend
//
// The filter keeps the actuator's services, so the wrappers see (and log,
// and check) only those. Safety is always there and judges the state the
// evaluator planned: with max_shift_per_tick, the core's plan is already
// this tick's step (evaluator's shift.go), so it is written as is. Retry
// (when retry.attempts > 1) retries it; DryRun (when dry_run is set)
// replaces the backend's Apply with a log line, so a dry run shows the
// steps the plan takes and the states Safety would refuse.
// Every layer keeps the backend's Name.
func Wrap(a Actuator, o WrapOptions, logger *slog.Logger) Actuator {
	if o.DryRun {
		a = DryRun(a, logger)
	}
	if o.Retry.Attempts > 1 {
		a = Retry(a, o.Retry.Attempts, o.Retry.Backoff)
	}
	a = Safety(a)
	return Scope(a, o.Services)
}

// Scope keeps a to services (all when empty): Apply passes a only their
// desired state, Current reports only them, and Drift compares only them.
// Backends leave this to Scope, which Wrap puts outermost.
func Scope(a Actuator, services []string) Actuator {
	return &scoped{a: a, services: slices.Clone(services)}
}

type scoped struct {
	a        Actuator
	services []string
}

func (s *scoped) Name() string     { return s.a.Name() }
func (s *scoped) Unwrap() Actuator { return s.a }

// Services are the services the actuator handles; nil means all.
func (s *scoped) Services() []string { return slices.Clone(s.services) }

func (s *scoped) Apply(ctx context.Context, desired Splits) error {
	return s.a.Apply(ctx, Filter(desired, s.services))
}

func (s *scoped) Current(ctx context.Context) (Splits, error) {
	d, err := s.a.Current(ctx)
	if err != nil || len(s.services) == 0 {
		return d, err
	}
	return Filter(d, s.services), nil
}

// layer returns the first layer of a (a itself, or a wrapper or backend
// under it, through `Unwrap() Actuator`) of type T.
func layer[T Actuator](a Actuator) (T, bool) {
	for {
		if l, ok := a.(T); ok {
			return l, true
		}
		u, ok := a.(interface{ Unwrap() Actuator })
		if !ok {
			var zero T
			return zero, false
		}
		a = u.Unwrap()
	}
}

// Backend returns the actuator under every wrapper (those with an
// `Unwrap() Actuator` method): the backend Build's factory returned, e.g.
// a *file.Actuator. A FanOut is returned as is.
func Backend(a Actuator) Actuator {
	for {
		u, ok := a.(interface{ Unwrap() Actuator })
		if !ok {
			return a
		}
		a = u.Unwrap()
	}
}
