package runner

import (
	"maps"
	"slices"
	"time"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/evaluator"
)

// sameDrill reports whether two versions of a route's drill are the same
// for the overrides file. The core never changes a Drill in place: what
// changes over its life are the recorded times.
func sameDrill(a, b evaluator.Drill) bool {
	return a.Since.Equal(b.Since) && a.Detected.Equal(b.Detected) && a.Moved.Equal(b.Moved) && a.FailedOver.Equal(b.FailedOver)
}

// auditDryRuns writes, for every service a dry-run drill holds, what the
// actuators would have applied (result "would"; Holds is the split they
// keep) each time the planned split changes, and logs it.
func (r *Runner) auditDryRuns(prev, next evaluator.State, now time.Time) {
	for _, svc := range slices.Sorted(maps.Keys(next.Services)) {
		held, ok := next.DryRunHold(svc)
		planned := next.Services[svc]
		if !ok || (prev.Services[svc] != nil && prev.Services[svc].Equal(*planned)) {
			continue
		}
		r.opts.Audit.Write(auditRecord{Time: now.UTC(), Type: "actuation", Service: svc, Weights: planned.Weights, Holds: held.Weights,
			Result: "would", Reason: "dry-run drill: the actuators keep the split from before the drill"})
		r.log.Info("dry-run drill: would apply", "service", svc, "weights", actuators.FormatWeights(planned.Weights),
			"actuators_keep", actuators.FormatWeights(held.Weights))
	}
}
