package runner

import (
	"context"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/runner/persist"
)

type actuationMetrics struct {
	total    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	drift    *prometheus.GaugeVec
	// held and failingSince are read back for the charts' actuation
	// markers (see noteActuation).
	held         *prometheus.GaugeVec
	changed      *prometheus.GaugeVec
	failingSince *prometheus.GaugeVec
}

func newActuationMetrics(reg prometheus.Registerer) *actuationMetrics {
	m := &actuationMetrics{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hermes_actuations_total", Help: "Actuator applies by result (success, error).",
		}, []string{"actuator", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "hermes_actuation_duration_seconds", Help: "Time an actuator took to apply the desired state.",
			Buckets: prometheus.DefBuckets,
		}, []string{"actuator"}),
		drift: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "hermes_actuator_drift", Help: "1 when the backend's current state differs from what Hermes wants after applying (0 when it matches; absent when it cannot be read).",
		}, []string{"actuator"}),
		held: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: persist.MetricActuatorTrafficRatio, Help: "Share (0 to 1) of a service's traffic the actuator's backend holds for a route after its last successful apply.",
		}, []string{persist.ActuatorLabel, persist.ServiceLabel, persist.RouteLabel}),
		changed: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: persist.MetricActuatorChanged, Help: "Unix time the actuator's backend last took a new split for the service.",
		}, []string{persist.ActuatorLabel, persist.ServiceLabel}),
		failingSince: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: persist.MetricActuatorFailingSince, Help: "Unix time the actuator's applies began to fail; 0 while its last apply succeeded.",
		}, []string{persist.ActuatorLabel}),
	}
	reg.MustRegister(m.total, m.duration, m.drift, m.held, m.changed, m.failingSince)
	return m
}

// desired is the actuators' desired state: the core's planned splits, but
// the split from before a dry-run drill for the services it holds.
func desired(s evaluator.State) actuators.Splits {
	d := make(actuators.Splits, len(s.Services))
	for name, sp := range s.Services {
		d[name] = *sp
		if held, ok := s.DryRunHold(name); ok {
			d[name] = held
		}
	}
	return d
}

// toWrite is what the runner writes to actuator a this tick: the desired
// state all, with the held services as the backend holds them and, with
// a replica name, the replicas' lease applied (lease.go). It reads the
// backend back only when either needs it; disagree are the services
// another replica holds with a different split.
func (r *Runner) toWrite(ctx context.Context, a actuators.Actuator, all actuators.Splits, s evaluator.State, now time.Time, interval time.Duration, held map[string]string) (out actuators.Splits, disagree []string, err error) {
	if len(held) == 0 && r.opts.Replica == "" {
		return all, nil, nil
	}
	cur, err := a.Current(ctx)
	if err != nil {
		return nil, nil, err
	}
	out = withHeld(cur, all, held)
	if r.opts.Replica == "" {
		return out, nil, nil
	}
	operator := map[string]bool{}
	for svc, o := range s.Overrides {
		operator[svc] = operatorSplit(o, true)
	}
	return out, lease(r.opts.Replica, out, cur, held, operator, now, interval), nil
}

// actuate re-asserts the desired state on every actuator, in a stable
// order; held services (heldServices) keep what each backend holds, and
// a split another replica holds is left to it (toWrite). It returns the
// services held for that, with holdReplicasDisagree. A failure leaves the
// decision standing; the next tick applies it again (level-triggered), so
// nothing is forgotten.
func (r *Runner) actuate(ctx context.Context, acts []actuators.Actuator, s evaluator.State, now time.Time, interval time.Duration, held map[string]string) map[string]string {
	all := desired(s)
	disagree := map[string]string{}
	sorted := append([]actuators.Actuator(nil), acts...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name() < sorted[j].Name() })
	for _, a := range sorted {
		start := r.opts.Now()
		desired, others, err := r.toWrite(ctx, a, all, s, now, interval, held)
		for _, svc := range others {
			disagree[svc] = holdReplicasDisagree
		}
		if err == nil {
			err = a.Apply(ctx, desired)
		}
		applied := r.opts.Now()
		r.acts.duration.WithLabelValues(a.Name()).Observe(applied.Sub(start).Seconds())
		r.mu.Lock()
		prev := r.lastActs[a.Name()]
		st := ActuatorOutcome{Actuator: a.Name(), At: now, OK: err == nil}
		if err != nil {
			st.Error = err.Error()
			st.FailingSince = prev.FailingSince
			if prev.OK || st.FailingSince.IsZero() {
				st.FailingSince = now
			}
		}
		r.lastActs[a.Name()] = st
		r.mu.Unlock()
		if err != nil {
			r.acts.total.WithLabelValues(a.Name(), "error").Inc()
			r.log.Error("actuation failed; retrying next tick", "actuator", a.Name(), "err", err)
			r.opts.Audit.Write(auditRecord{Time: now.UTC(), Type: "actuation", Actuator: a.Name(), Result: "error", Error: err.Error()})
			r.noteActuation(a.Name(), now, nil, st.FailingSince, err)
			continue
		}
		r.acts.total.WithLabelValues(a.Name(), "success").Inc()
		holds, drift, derr := actuators.Compare(ctx, a, desired)
		r.noteActuation(a.Name(), applied, heldAfter(a, desired, holds, derr), time.Time{}, nil)
		switch {
		case derr != nil:
			r.acts.drift.DeleteLabelValues(a.Name())
		case drift:
			r.acts.drift.WithLabelValues(a.Name()).Set(1)
		default:
			r.acts.drift.WithLabelValues(a.Name()).Set(0)
		}
		if changed := !sameDesired(r, a.Name(), desired); changed || !prev.OK || drift {
			result := "ok"
			if actuators.IsDryRun(a) {
				result = "dry-run"
			}
			for svc, ds := range desired {
				rec := auditRecord{Time: now.UTC(), Type: "actuation", Actuator: a.Name(), Service: svc, Weights: ds.Weights, Result: result}
				if have, ok := holds[svc]; drift && ok && !have.Equal(ds) {
					// A rate limit (or a dry run) left the backend short of
					// the decision: record what it really holds.
					rec.Holds = have.Weights
				}
				r.opts.Audit.Write(rec)
			}
		}
	}
	return disagree
}

// sameDesired remembers the last desired state audited per actuator so the
// audit log records changes, not every idempotent re-assertion.
func sameDesired(r *Runner, name string, d actuators.Splits) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.lastDesired == nil {
		r.lastDesired = map[string]actuators.Splits{}
	}
	old, ok := r.lastDesired[name]
	r.lastDesired[name] = d
	if !ok || len(old) != len(d) {
		return false
	}
	for svc, ds := range d {
		if !old[svc].Equal(ds) {
			return false
		}
	}
	return true
}
