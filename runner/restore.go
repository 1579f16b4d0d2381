package runner

import (
	"context"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/runner/persist"
	"github.com/hermes-failover/hermes/traffic"
)

// restore rebuilds the state before the first decision (persist.Load):
// from Hermes's own series in Prometheus, else from what the actuators hold
// now; operator overrides and drills come from the overrides file.
func (r *Runner) restore(ctx context.Context) error {
	r.mu.Lock()
	pol, query, acts := r.pol, r.query, r.actuators
	r.mu.Unlock()
	now := r.opts.Now()
	holds, err := readOverridesFile(r.opts.OverridesPath)
	if err != nil {
		return err
	}
	// A hung Prometheus must not keep Hermes from starting: every restore
	// query gets the query timeout, then Hermes falls back to the actuators.
	timeout := pol.Config.Global.QueryTimeout
	bounded := func(ctx context.Context, q string, t time.Time) (model.Vector, error) {
		qctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return query(qctx, q, t)
	}
	// FanOut.Current takes each service from the first actuator (by name)
	// that can say, and reports those that cannot.
	var known map[string]traffic.Split
	current := func(ctx context.Context) (map[string]traffic.Split, error) {
		var err error
		known, err = actuators.FanOut("actuators", acts...).Current(ctx)
		return known, err
	}
	got := persist.Load(ctx, pol, bounded, current, persist.Local{Overrides: holds.Overrides, Alerts: holds.Alerts}, now, r.opts.Restore)
	got.State.Drills = holds.Drills // the first tick ends those that expired meanwhile
	for _, err := range got.Problems {
		r.log.Warn("restore", "err", err)
	}
	for _, line := range got.Report {
		r.log.Info("restored", "source", got.Source, "detail", line)
	}
	r.opts.Audit.Write(auditRecord{Time: now.UTC(), Type: "restore", Result: got.Source, Reason: strings.Join(got.Report, "; ")})
	r.mu.Lock()
	r.state = got.State
	r.unknownSplit = map[string]bool{}
	if got.Source == "actuators" && len(acts) > 0 {
		for _, svc := range pol.Config.Services {
			if _, ok := known[svc.Name]; !ok {
				r.unknownSplit[svc.Name] = true
				r.log.Warn("no backend can say what it holds for the service and Prometheus has no saved state: writing nothing for it until the core decides it on data", "service", svc.Name)
			}
		}
	}
	r.mu.Unlock()
	r.restored.Store(true)
	return nil
}
