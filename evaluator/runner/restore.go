package runner

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/evaluator/alerting"
)

// restore rebuilds the state before the first decision: from Hermes's own
// series in Prometheus when it holds them, else from what the actuators hold
// now — never by assuming every route is healthy. Operator overrides come
// from the overrides file.
func (r *Runner) restore(ctx context.Context) error {
	r.mu.Lock()
	pol, query, acts := r.pol, r.query, r.actuators
	r.mu.Unlock()
	now := r.opts.Now()
	// A hung Prometheus must not keep Hermes from starting: every restore
	// query gets the query timeout, then Hermes falls back to the actuators.
	timeout := pol.Config.Global.QueryTimeout
	bounded := func(ctx context.Context, q string, t time.Time) (model.Vector, error) {
		qctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		return query(qctx, q, t)
	}
	st, report, err := evaluator.Restore(ctx, bounded, pol, now, r.opts.Restore)
	source := "prometheus"
	if err != nil || len(st.Routes) == 0 {
		if err != nil {
			r.log.Warn("cannot restore state from Prometheus; using the actuators' current state", "err", err)
		}
		// A split shaped by an operator's pin or pause says nothing about
		// the routes' health: those services start from their levels as
		// recorded by the actuator, if any, else normal.
		ov, err := loadOverrides(r.opts.OverridesPath)
		if err != nil {
			return err
		}
		current := map[string]map[string]int{}
		recorded := map[string]string{}
		// FanOut.Current takes each service from the first actuator (by
		// name) that can say; actuators that cannot are logged and skipped.
		d, err := actuators.FanOut("actuators", acts...).Current(ctx)
		if err != nil { // some or all actuators could not say; use the others
			r.log.Warn("cannot read actuator state", "err", err)
		}
		for svc, ds := range d {
			for route, lvl := range ds.Levels {
				if _, seen := recorded[route]; !seen {
					recorded[route] = lvl.String()
				}
			}
			if _, pinned := ov[svc]; !pinned && len(ds.Weights) > 0 {
				current[svc] = ds.Weights
			}
		}
		st, report = evaluator.FromActuators(pol, current, now)
		applyRecordedLevels(&st, recorded, now, &report)
		source = "actuators"
	}
	if al, err := alerting.Restore(ctx, bounded, pol, now, r.opts.Restore); err != nil {
		r.log.Warn("cannot restore alerts from Prometheus; they start again", "err", err)
	} else {
		st.Alerts = al
	}
	ov, err := loadOverrides(r.opts.OverridesPath)
	if err != nil {
		return err
	}
	st.Overrides = ov
	for _, line := range report {
		r.log.Info("restored", "source", source, "detail", line)
	}
	r.opts.Audit.Write(auditRecord{Time: now.UTC(), Type: "restore", Result: source, Reason: joinLines(report)})
	r.mu.Lock()
	r.state = st
	r.mu.Unlock()
	r.restored.Store(true)
	return nil
}

func joinLines(lines []string) string {
	out := ""
	for i, l := range lines {
		if i > 0 {
			out += "; "
		}
		out += l
	}
	return out
}

// applyRecordedLevels takes the levels an actuator recorded (the file
// actuator keeps them): for routes the split could not tell about, and
// where the recorded level is more severe than the one read from the split
// (a manual route must stay manual: no automatic failback). A route in
// failback restarts failed over, at stage 0.
func applyRecordedLevels(st *evaluator.State, recorded map[string]string, now time.Time, report *[]string) {
	for route, name := range recorded {
		if name == "failback" {
			name = evaluator.Failover.String()
		}
		lvl, err := evaluator.ParseLevel(name)
		if err != nil {
			continue
		}
		if rs, known := st.Routes[route]; known && rs.Level >= lvl {
			continue
		}
		if st.Routes == nil {
			st.Routes = map[string]*evaluator.RouteState{}
		}
		rs := &evaluator.RouteState{Level: lvl, Since: now}
		if lvl == evaluator.Failover {
			rs.FailingSince = now
		}
		st.Routes[route] = rs
		*report = append(*report, fmt.Sprintf("%s: restored %s as recorded by an actuator", route, lvl))
	}
}
