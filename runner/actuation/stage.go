// Package actuation is the actuation stage of the live loop: every tick
// it re-asserts the core's planned splits on every backend
// (level-triggered), and owns what Hermes knows of the backends, the
// services it withholds, the replicas' leases and the rate limit's
// carry-over (what each backend took, AppliedSplits, which the core steps
// from). It reads the tick's Result and its own state only, and imports
// no other stage's package.
//
// Its words, one meaning each:
//   - withheld: a service written to no backend this tick, for a reason
//     (WithheldNoData, WithheldUnknownSplit, WithheldReplicasDisagree);
//     the series keeps its older name, hermes_service_actuation_held.
//   - lease: another replica's claim on a backend's service, live while
//     its stamp changes (lease.go).
//   - holds (a verb): what a backend has, as read back or applied.
package actuation

import (
	"context"
	"log/slog"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/labelname"
	"github.com/hermes-failover/hermes/promapi"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/runner/auditlog"
	"github.com/hermes-failover/hermes/runner/condlog"
	"github.com/hermes-failover/hermes/runner/series"
	"github.com/hermes-failover/hermes/runner/tick"
	"github.com/hermes-failover/hermes/traffic"
)

// Stage re-asserts the desired state on every backend each tick. It owns
// what the runner knows of the backends: each actuator's last outcome,
// what each backend holds after its last successful apply (applied), the
// services it withholds and why (withheld.go), the replicas' leases
// (lease.go), the audit of dry-run drills, and their metrics. Its methods
// are safe for concurrent use; Tick is called by one goroutine at a time.
type Stage struct {
	// replica names this replica when two write one backend (Options.Replica).
	replica         string
	now             func() time.Time
	elapsed         func() time.Duration
	log             *slog.Logger
	audit           *auditlog.Log
	metrics         *metrics
	withheldMetrics *withheldMetrics

	mu sync.Mutex
	// outcomes are each actuator's last outcome, by name.
	outcomes map[string]Outcome
	// applied is what each actuator's backend holds after its last
	// successful apply (see noteActuation).
	applied map[string]actuators.Splits
	// lastDesired is the last desired state audited per actuator.
	lastDesired map[string]actuators.Splits
	// unknownSplit are the services whose split no backend could say at
	// the restart: withheld until the core decides them on data.
	unknownSplit map[string]bool
	// lastWithheld and lastPauseFailed are what noteWithheld last logged.
	lastWithheld    map[string]string
	lastPauseFailed string
	// tickWithheld are the last tick's withheld services, for Withheld.
	tickWithheld map[string]string
	// leases are the other replicas' stamps seen on each backend (lease.go).
	leases leases
	// logged are the failing actuators, logged when they start, change
	// and end to fail (condlog); only Tick's goroutine uses it.
	logged *condlog.Log
}

// Options configure a Stage.
type Options struct {
	// Replica names this replica when two write one backend: every split
	// it writes is stamped with it and the tick, and it does not
	// overwrite another replica's live lease (lease.go). Empty: one
	// writer, nothing stamped.
	Replica string
	// Now reads the wall clock (the time an apply took).
	Now func() time.Time
	// Elapsed reads the monotonic clock, by which the leases are timed.
	Elapsed func() time.Duration
	Logger  *slog.Logger
	// Audit receives the actuations and the dry-run drills' "would".
	Audit      *auditlog.Log
	Registerer prometheus.Registerer
}

// New builds the stage and registers its metrics on o.Registerer.
func New(o Options) *Stage {
	return &Stage{replica: o.Replica, now: o.Now, elapsed: o.Elapsed, log: o.Logger, audit: o.Audit, leases: leases{},
		metrics: newMetrics(o.Registerer), withheldMetrics: newWithheldMetrics(o.Registerer),
		outcomes: map[string]Outcome{}, applied: map[string]actuators.Splits{},
		lastDesired: map[string]actuators.Splits{}, unknownSplit: map[string]bool{}, logged: condlog.New(o.Logger)}
}

// Tick audits what dry-run drills keep from the backends, decides which
// services to withhold, writes the others to every actuator and exports
// the withheld ones. The actuations it saw go into t.Actuations.
func (s *Stage) Tick(ctx context.Context, t *tick.Result) {
	s.auditDryRuns(t.Prev, t.Next, t.Time)
	s.mu.Lock()
	withheld := s.withheldServices(t.Next, t.Data)
	s.mu.Unlock()
	for svc, why := range s.actuate(ctx, t, withheld) {
		if _, ok := withheld[svc]; !ok {
			withheld[svc] = why
		}
	}
	s.noteWithheld(t.Next, withheld)
	s.keepWithheld(withheld)
}

// Restored tells the stage the services whose split no backend could say
// at the restart (the persist stage's restore, handed over by the loop).
func (s *Stage) Restored(unknownSplit []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, svc := range unknownSplit {
		s.unknownSplit[svc] = true
	}
}

// UnknownSplits are the services whose split no backend could say at the
// restart and that the core has not decided on data since, but for those
// an override (ovs, the state before the tick) gives a split, a pin or a
// pause with its frozen split: for the core's Input, a pause of one
// freezes nothing.
func (s *Stage) UnknownSplits(ovs map[string]evaluator.Override) map[string]bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out map[string]bool
	for svc := range s.unknownSplit {
		if o, ok := ovs[svc]; OperatorSplit(o, ok) {
			continue
		}
		if out == nil {
			out = map[string]bool{}
		}
		out[svc] = true
	}
	return out
}

// AppliedSplits are, by service, the split the backends that limit its
// shift took at their last successful apply, for the core's Input (a
// limited move steps from it, evaluator's shift.go). A backend limits a
// service when its actuator writes the service with a max_shift_per_tick
// below 100 and is not a dry run (a dry run never takes a split). A
// service is left out when one of them has taken no split for it in this
// process (after a restart, before its first apply), or when they hold
// different splits: the plan then steps from itself.
func (s *Stage) AppliedSplits(cfg *config.Config, acts []actuators.Actuator) map[string]traffic.Split {
	limits := map[string]config.ActuatorConfig{}
	for _, ac := range cfg.Actuators {
		if ac.MaxShiftPerTick > 0 && ac.MaxShiftPerTick < 100 {
			limits[ac.ResolvedName()] = ac
		}
	}
	if len(limits) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out map[string]traffic.Split
	for _, svc := range cfg.Services {
		var have *traffic.Split
		agree := true
		for _, a := range acts {
			ac, ok := limits[a.Name()]
			if !ok || actuators.IsDryRun(a) || len(ac.Services) > 0 && !slices.Contains(ac.Services, svc.Name) {
				continue
			}
			sp, ok := s.applied[a.Name()][svc.Name]
			if !ok || have != nil && !have.Equal(sp) {
				agree = false
				break
			}
			have = &sp
		}
		if !agree || have == nil {
			continue
		}
		if out == nil {
			out = map[string]traffic.Split{}
		}
		out[svc.Name] = *have
	}
	return out
}

// Health is each actuator's last outcome as the core reads it.
func (s *Stage) Health() map[string]evaluator.ActuatorHealth {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := make(map[string]evaluator.ActuatorHealth, len(s.outcomes))
	for name, a := range s.outcomes {
		h[name] = evaluator.ActuatorHealth{OK: a.OK, FailingSince: a.FailingSince, Error: a.Error}
	}
	return h
}

// Outcomes are each actuator's last outcome, by name.
func (s *Stage) Outcomes() []Outcome {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Outcome, 0, len(s.outcomes))
	for _, name := range slices.Sorted(maps.Keys(s.outcomes)) {
		out = append(out, s.outcomes[name])
	}
	return out
}

type metrics struct {
	total    *prometheus.CounterVec
	duration *prometheus.HistogramVec
	drift    *prometheus.GaugeVec
	// applied, changed and failingSince are read back for the charts'
	// actuation markers (see noteActuation).
	applied      *prometheus.GaugeVec
	changed      *prometheus.GaugeVec
	failingSince *prometheus.GaugeVec
}

// newMetrics registers the stage's metrics on reg.
func newMetrics(reg prometheus.Registerer) *metrics {
	m := &metrics{
		total: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hermes_actuations_total", Help: "Actuator applies by result (success, error).",
		}, []string{"actuator", "result"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "hermes_actuation_duration_seconds", Help: "Time an actuator took to apply the desired state.",
			Buckets: prometheus.DefBuckets,
		}, []string{"actuator"}),
		drift: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "hermes_actuator_drift", Help: "1 when the backend's current state differs from what Hermes wants (0 when it matches), or when the last apply failed and the backend, read back, does not hold it or cannot be read; absent when a successful apply cannot be read back.",
		}, []string{"actuator"}),
		applied: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: series.ActuatorTrafficRatio, Help: "Share (0 to 1) of a service's traffic the actuator's backend holds for a route after its last successful apply.",
		}, []string{labelname.Actuator, labelname.Service, labelname.Route}),
		changed: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: series.ActuatorChanged, Help: "Unix time the actuator's backend last took a new split for the service.",
		}, []string{labelname.Actuator, labelname.Service}),
		failingSince: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: series.ActuatorFailingSince, Help: "Unix time the actuator's applies began to fail; 0 while its last apply succeeded.",
		}, []string{labelname.Actuator}),
	}
	reg.MustRegister(m.total, m.duration, m.drift, m.applied, m.changed, m.failingSince)
	return m
}

// desired is the actuators' desired state: the core's planned splits, but
// the split from before a dry-run drill for the services it keeps.
func desired(s evaluator.State) actuators.Splits {
	d := make(actuators.Splits, len(s.Services))
	for name, sp := range s.Services {
		d[name] = *sp
		if kept, ok := s.DryRunHold(name); ok {
			d[name] = kept
		}
	}
	return d
}

// toWrite is what the stage writes to actuator a this tick: the desired
// state all, with the withheld services as the backend holds them and,
// with a replica name, the replicas' lease applied (lease.go). It reads
// the backend back only when either needs it; disagree are the services
// under another replica's live lease with a different split.
func (s *Stage) toWrite(ctx context.Context, a actuators.Actuator, all actuators.Splits, st evaluator.State, now time.Time, interval time.Duration, withheld map[string]string) (out actuators.Splits, disagree []string, err error) {
	var known actuators.Splits
	if h, ok := actuators.Backend(a).(wholeDocument); ok {
		h.Hold(withheldBy(a, all, withheld))
		s.mu.Lock()
		known = s.applied[a.Name()]
		s.mu.Unlock()
	}
	if len(withheld) == 0 && s.replica == "" {
		return all, nil, nil
	}
	cur, err := a.Current(ctx)
	if err != nil {
		return nil, nil, err
	}
	out = withCurrent(cur, known, all, withheld)
	if s.replica == "" {
		return out, nil, nil
	}
	operator := map[string]bool{}
	for svc, o := range st.Overrides {
		operator[svc] = OperatorSplit(o, true)
	}
	at := s.elapsed()
	s.mu.Lock()
	defer s.mu.Unlock()
	return out, s.leases.lease(a.Name(), s.replica, out, cur, withheld, operator, now, at, interval), nil
}

// wholeDocument is a backend that writes every service in one document
// (the file actuator): leaving a withheld service out would erase it, so
// it is told which services are withheld and why (its method keeps the
// file actuator's name, Hold), and gets their last known split
// (withCurrent).
type wholeDocument interface {
	Hold(withheld map[string]string)
}

// withheldBy are the services of withheld that actuator a handles, with why;
// nil when none.
func withheldBy(a actuators.Actuator, all actuators.Splits, withheld map[string]string) map[string]string {
	var out map[string]string
	for svc := range actuators.Handled(a, all) {
		if why, ok := withheld[svc]; ok {
			if out == nil {
				out = map[string]string{}
			}
			out[svc] = why
		}
	}
	return out
}

// actuate re-asserts the desired state of tick t on every actuator, in a
// stable order; withheld services (withheldServices) keep what each
// backend holds, and a split under another replica's live lease is left to it
// (toWrite). It returns the services withheld for that, with
// WithheldReplicasDisagree. A failure leaves the decision standing; the
// next tick applies it again (level-triggered), so nothing is forgotten.
func (s *Stage) actuate(ctx context.Context, t *tick.Result, withheld map[string]string) map[string]string {
	st, now, interval := t.Next, t.Time, t.Config.Global.EvaluationInterval
	all := desired(st)
	disagree := map[string]string{}
	failing := map[string]condlog.Line{} // by actuator, for s.logged
	defer func() { s.logged.Observe(now, "actuation", failing) }()
	sorted := append([]actuators.Actuator(nil), t.Actuators...)
	sort.SliceStable(sorted, func(i, j int) bool { return sorted[i].Name() < sorted[j].Name() })
	for _, a := range sorted {
		start := s.now()
		desired, others, err := s.toWrite(ctx, a, all, st, now, interval, withheld)
		for _, svc := range others {
			disagree[svc] = WithheldReplicasDisagree
		}
		if err == nil {
			err = a.Apply(ctx, desired)
		}
		applied := s.now()
		s.metrics.duration.WithLabelValues(a.Name()).Observe(applied.Sub(start).Seconds())
		s.mu.Lock()
		prev := s.outcomes[a.Name()]
		out := Outcome{Actuator: a.Name(), At: now, OK: err == nil}
		if err != nil {
			out.Error = err.Error()
			out.FailingSince = prev.FailingSince
			if prev.OK || out.FailingSince.IsZero() {
				out.FailingSince = now
			}
		}
		s.outcomes[a.Name()] = out
		s.mu.Unlock()
		if err != nil {
			s.metrics.total.WithLabelValues(a.Name(), "error").Inc()
			failing[a.Name()] = condlog.Line{Level: slog.LevelError, Msg: "actuation failed; retrying every tick", Attrs: []any{"actuator", a.Name(), "err", err},
				Same: promapi.ErrorDetail(err), End: "actuation works again", EndAttrs: []any{"actuator", a.Name()}}
			s.audit.Write(auditlog.Record{Time: now.UTC(), Type: "actuation", Actuator: a.Name(), Result: "error", Error: err.Error()})
			t.Actuations = append(t.Actuations, s.noteActuation(a.Name(), now, nil, out.FailingSince, err)...)
			s.noteFailedDrift(ctx, a, desired, all)
			continue
		}
		s.metrics.total.WithLabelValues(a.Name(), "success").Inc()
		readBack, drift, derr := actuators.Compare(ctx, a, desired)
		t.Actuations = append(t.Actuations, s.noteActuation(a.Name(), applied, appliedAfter(a, desired, readBack, derr), time.Time{}, nil)...)
		switch {
		case derr != nil:
			s.metrics.drift.DeleteLabelValues(a.Name())
		case drift:
			s.metrics.drift.WithLabelValues(a.Name()).Set(1)
		default:
			s.metrics.drift.WithLabelValues(a.Name()).Set(0)
		}
		if changed := !s.sameDesired(a.Name(), desired); changed || !prev.OK || drift {
			result := "ok"
			if actuators.IsDryRun(a) {
				result = "dry-run"
			}
			for svc, ds := range desired {
				rec := auditlog.Record{Time: now.UTC(), Type: "actuation", Actuator: a.Name(), Service: svc, Weights: ds.Weights, Result: result}
				if have, ok := readBack[svc]; drift && ok && !have.Equal(ds) {
					// A dry run (or a backend that did not take the split)
					// left the backend short of the decision: record what it really holds.
					rec.Holds = have.Weights
				}
				s.audit.Write(rec)
			}
		}
	}
	return disagree
}

// noteFailedDrift sets actuator a's drift after a failed apply: 1 unless
// a's backend, read back, already holds what was to be written (desired,
// or all when toWrite failed before it knew), so drift counts until the
// backend (a webhook's receiver) acknowledges the state. A backend that
// cannot be read counts as drifted: nothing says it holds the state.
func (s *Stage) noteFailedDrift(ctx context.Context, a actuators.Actuator, desired, all actuators.Splits) {
	if desired == nil {
		desired = all
	}
	if _, drift, err := actuators.Compare(ctx, a, desired); err == nil && !drift {
		s.metrics.drift.WithLabelValues(a.Name()).Set(0)
		return
	}
	s.metrics.drift.WithLabelValues(a.Name()).Set(1)
}

// sameDesired remembers the last desired state audited per actuator so the
// audit log records changes, not every idempotent re-assertion.
func (s *Stage) sameDesired(name string, d actuators.Splits) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	old, ok := s.lastDesired[name]
	s.lastDesired[name] = d
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

// auditDryRuns writes, for every service a dry-run drill keeps, what the
// actuators would have applied (result "would"; Holds is the split they
// keep) each time the planned split changes, and logs it.
func (s *Stage) auditDryRuns(prev, next evaluator.State, now time.Time) {
	for _, svc := range slices.Sorted(maps.Keys(next.Services)) {
		kept, ok := next.DryRunHold(svc)
		planned := next.Services[svc]
		if !ok || (prev.Services[svc] != nil && prev.Services[svc].Equal(*planned)) {
			continue
		}
		s.audit.Write(auditlog.Record{Time: now.UTC(), Type: "actuation", Service: svc, Weights: planned.Weights, Holds: kept.Weights,
			Result: "would", Reason: "dry-run drill: the actuators keep the split from before the drill"})
		s.log.Info("dry-run drill: would apply", "service", svc, "weights", actuators.FormatWeights(planned.Weights),
			"actuators_keep", actuators.FormatWeights(kept.Weights))
	}
}
