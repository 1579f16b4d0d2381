package actuators

import (
	"context"
	"fmt"
	"time"
)

// RetryableError is an error that says whether trying again may succeed: a
// backend marks transient failures (5xx, 429, timeouts, refused
// connections) so that Retry tries again within the tick, and leaves
// permanent ones (a rejected request, a bad configuration) unmarked.
type RetryableError interface {
	error
	Retryable() bool
}

// Retryable marks err as transient. It returns nil for a nil err; the
// result wraps err (errors.Is and errors.As see through it) and keeps its
// message.
func Retryable(err error) error {
	if err == nil {
		return nil
	}
	return retryable{err}
}

type retryable struct{ err error }

func (e retryable) Error() string   { return e.err.Error() }
func (e retryable) Unwrap() error   { return e.err }
func (e retryable) Retryable() bool { return true }

// IsRetryable reports whether err, or any error it wraps, is a
// RetryableError whose Retryable method returns true. For joined errors
// (several services or actuators failing at once) one transient failure is
// enough: Apply is idempotent, so trying again re-sends only what failed.
func IsRetryable(err error) bool {
	switch e := err.(type) {
	case nil:
		return false
	case interface{ Retryable() bool }:
		if e.Retryable() {
			return true
		}
	}
	switch e := err.(type) {
	case interface{ Unwrap() error }:
		return IsRetryable(e.Unwrap())
	case interface{ Unwrap() []error }:
		for _, inner := range e.Unwrap() {
			if IsRetryable(inner) {
				return true
			}
		}
	}
	return false
}

// Retry tries Apply (and Current) up to attempts times within a tick, while
// the error is retryable (IsRetryable), waiting backoff, then twice as long
// before each further attempt. It gives up early when the context ends or
// when its deadline falls before the next attempt: the next tick re-asserts
// the state anyway. attempts below 2 means no retry.
func Retry(a Actuator, attempts int, backoff time.Duration) Actuator {
	return &retry{a: a, attempts: max(attempts, 1), backoff: max(backoff, 0)}
}

type retry struct {
	a        Actuator
	attempts int
	backoff  time.Duration
}

func (r *retry) Name() string     { return r.a.Name() }
func (r *retry) Unwrap() Actuator { return r.a }

func (r *retry) Apply(ctx context.Context, desired Splits) error {
	return r.do(ctx, func() error { return r.a.Apply(ctx, desired) })
}

func (r *retry) Current(ctx context.Context) (Splits, error) {
	var out Splits
	err := r.do(ctx, func() (err error) {
		out, err = r.a.Current(ctx)
		return err
	})
	return out, err
}

func (r *retry) do(ctx context.Context, f func() error) error {
	wait := r.backoff
	for i := 1; ; i++ {
		err := f()
		switch {
		case err == nil:
			return nil
		case !IsRetryable(err):
			if i > 1 {
				return fmt.Errorf("attempt %d of %d: %w", i, r.attempts, err)
			}
			return err
		case i >= r.attempts:
			if i > 1 {
				return fmt.Errorf("gave up after %d attempts: %w", i, err)
			}
			return err
		}
		if dl, ok := ctx.Deadline(); ok && time.Until(dl) < wait {
			return fmt.Errorf("gave up after %d of %d attempts (the tick ends before the next one): %w", i, r.attempts, err)
		}
		if !sleep(ctx, wait) {
			return fmt.Errorf("gave up after %d of %d attempts (%v): %w", i, r.attempts, ctx.Err(), err)
		}
		wait *= 2
	}
}

// sleep waits d, or less if ctx ends first; it reports whether it waited d.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
