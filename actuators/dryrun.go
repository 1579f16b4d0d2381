package actuators

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"
	"sync"
)

// DryRun logs what a would apply and applies nothing. For each service
// whose desired state differs from what a's Current reports, it logs the
// change at info level, once per distinct desired state (re-asserting the
// same state every tick logs at debug level, not to flood the log); an
// unchanged service logs at debug level. Apply returns nil unless ctx is
// done: a dry run never fails a tick. Current reads the real backend, so a
// drift check on a dry-run actuator reports the difference that Apply
// would remove.
func DryRun(a Actuator, logger *slog.Logger) Actuator {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &dryRun{a: a, logger: logger.With("dry_run", true), logged: Splits{}}
}

type dryRun struct {
	a      Actuator
	logger *slog.Logger

	mu     sync.Mutex
	logged Splits // last state logged at info level, per service
}

func (d *dryRun) Name() string     { return d.a.Name() }
func (d *dryRun) Unwrap() Actuator { return d.a }

func (d *dryRun) Current(ctx context.Context) (Splits, error) { return d.a.Current(ctx) }

func (d *dryRun) Apply(ctx context.Context, desired Splits) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	current, err := d.a.Current(ctx)
	if err != nil {
		d.logger.Warn("dry run: cannot read the current state; showing the desired state only", "err", err)
	}
	for _, svc := range slices.Sorted(maps.Keys(desired)) {
		want := desired[svc]
		have, known := current[svc]
		if known && have.Equal(want) {
			d.logger.Debug("dry run: up to date", "service", svc, "weights", FormatWeights(want.Weights))
			delete(d.logged, svc)
			continue
		}
		from := "unknown"
		if known {
			from = FormatWeights(have.Weights)
		}
		level := slog.LevelInfo
		if prev, ok := d.logged[svc]; ok && prev.Equal(want) {
			level = slog.LevelDebug
		}
		d.logged[svc] = want
		d.logger.Log(ctx, level, "dry run: would apply",
			"service", svc,
			"from", from,
			"to", FormatWeights(want.Weights),
			"retries_enabled", want.RetriesEnabled,
			"degraded_mode", want.Degraded,
			"reasons", strings.Join(want.Reasons, "; "))
	}
	return nil
}

// FormatWeights renders a split as "free=95 paid=5", routes sorted.
func FormatWeights(w map[string]int) string {
	var b strings.Builder
	for i, r := range slices.Sorted(maps.Keys(w)) {
		if i > 0 {
			b.WriteByte(' ')
		}
		fmt.Fprintf(&b, "%s=%d", r, w[r])
	}
	return b.String()
}

// IsDryRun reports whether a, or an actuator it wraps, is a DryRun: its
// successful Apply changed nothing (for audit logs and status pages).
func IsDryRun(a Actuator) bool {
	_, ok := layer[*dryRun](a)
	return ok
}
