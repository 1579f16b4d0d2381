// Package runner is the live shell around the evaluator core. One tick,
// in the order the packages are called:
//
//	promapi.Collector     one PromQL query per signal, each answer streamed
//	                      into route slots → evaluator.Snapshot (plus the
//	                      actuators' health after the last tick)
//	evaluator.Step        the pure core, with the operator commands queued
//	                      since the last tick → next State and Events
//	telemetry / persist   export the state as Hermes's own series
//	AuditLog              one JSON line per event
//	actuators             re-assert State.Services on every backend
//	alerting.Sender       queue State.Alerts for every Alertmanager
//
// The loop goroutine is the only writer of the state: operator commands
// (Submit) are queued and applied by the next tick's Step; reloads are
// loaded beside the loop, coalesced and rate-limited (reload.go), and
// taken by the next tick. At start-up persist.Load restores the state.
package runner

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/promapi"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/runner/alerting"
	"github.com/hermes-failover/hermes/runner/history"
	"github.com/hermes-failover/hermes/runner/persist"
	"github.com/hermes-failover/hermes/runner/telemetry"
)

// Options configure a Runner. ConfigPath is required.
type Options struct {
	ConfigPath string
	// OverridesPath is where operator overrides are kept across restarts
	// (default: hermes-overrides.json next to the config file).
	OverridesPath string
	Logger        *slog.Logger
	Registerer    prometheus.Registerer
	// Audit receives one JSON object per level change, actuation and override.
	Audit *AuditLog
	// Actuators are the actuator kinds the configuration may use.
	Actuators *actuators.Registry
	// Restore says where Hermes's own series are and how old they may be.
	Restore persist.RestoreOptions
	// Metrics tunes Hermes's own series (--metrics.per-signal).
	Metrics telemetry.Options
	// ReloadInterval is the least time between two applied reloads
	// (default 1 s); requests in between are coalesced into one.
	ReloadInterval time.Duration
	// Replica names this replica when two write one backend (--replica):
	// every split it writes is stamped with it and the tick, and it does
	// not overwrite another replica's fresh, different split (lease.go).
	// Every actuator must carry the stamp (actuators.CheckStamps), and
	// the name must pass CheckReplicaName. Empty: one writer, nothing
	// stamped.
	Replica string
	// Now reads the clock; tests replace it.
	Now func() time.Time
	// NewQuery builds the query side from the configuration; nil means the
	// Prometheus HTTP API at prometheus.url, whose tick answers are decoded
	// straight into route slots (promapi.Client.QueryRoutes).
	NewQuery func(cfg *rules.Config, logger *slog.Logger) (promapi.QueryFunc, error)
}

// Runner runs the tick loop. Its methods are safe for concurrent use.
type Runner struct {
	opts Options
	log  *slog.Logger
	// newQuery builds the query side (Options.NewQuery, else Prometheus).
	newQuery func(cfg *rules.Config, logger *slog.Logger) (promapi.QueryFunc, promapi.RouteQueryFunc, error)
	metrics  *telemetry.Metrics
	acts     *actuationMetrics
	alerts   *alerting.Sender
	// collector gathers each tick's answers into its snapshot; only the
	// loop's goroutine uses it (tick).
	collector promapi.Collector

	mu        sync.Mutex
	cfg       *rules.Config
	pol       *evaluator.Policy
	query     promapi.QueryFunc
	ticks     promapi.RouteQueryFunc
	actuators []actuators.Actuator
	state     evaluator.State
	lastTick  time.Time
	lastActs  map[string]ActuatorOutcome
	// problems are the last tick's failed signal queries.
	problems []SignalProblem
	// alertErrors are the last run-time failure of each alert expression.
	alertErrors map[string]AlertError
	lastDesired map[string]actuators.Splits
	// held is what each actuator's backend held after its last successful
	// apply (see noteActuation).
	held     map[string]actuators.Splits
	loadedAt time.Time
	// history is the status page's fallback when Prometheus cannot answer.
	history *history.Store
	// pending are the operator commands the next tick applies, in order.
	pending []*pendingCommand
	// inflight are the commands the running tick took, until it stores
	// its state: Submit checks a new command against them too.
	inflight []*pendingCommand
	// unknownSplit are the services whose split no backend could say at
	// the restart: held until the core decides them on data (hold.go).
	unknownSplit    map[string]bool
	holds           *holdMetrics
	lastHeld        map[string]string
	lastPauseFailed string
	// overridesUnsaved: the last write of the overrides file failed.
	overridesUnsaved bool
	nextID           uint64

	// ticked is set by the first tick, ready by the first tick that had
	// data (see Ready).
	ticked   atomic.Bool
	ready    atomic.Bool
	restored atomic.Bool
	reloads  reloadQueue
}

// New loads and validates the configuration and builds the query side and
// the actuators. It does not start anything.
func New(opts Options) (*Runner, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Registerer == nil {
		opts.Registerer = prometheus.NewRegistry()
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Actuators == nil {
		opts.Actuators = &actuators.Registry{}
	}
	if opts.ReloadInterval == 0 {
		opts.ReloadInterval = time.Second
	}
	if opts.OverridesPath == "" {
		opts.OverridesPath = defaultOverridesPath(opts.ConfigPath)
	}
	if err := CheckReplicaName(opts.Replica); err != nil {
		return nil, err
	}
	opts.Audit.register(opts.Registerer, opts.Logger)
	r := &Runner{
		history:     history.New(historyTicks, historyEvents),
		opts:        opts,
		log:         opts.Logger,
		metrics:     telemetry.New(opts.Registerer, opts.Metrics),
		acts:        newActuationMetrics(opts.Registerer),
		holds:       newHoldMetrics(opts.Registerer),
		reloads:     reloadQueue{kick: make(chan struct{}, 1)},
		lastActs:    map[string]ActuatorOutcome{},
		newQuery:    prometheusQueries,
		alertErrors: map[string]AlertError{},
	}
	if opts.NewQuery != nil {
		r.newQuery = func(cfg *rules.Config, logger *slog.Logger) (promapi.QueryFunc, promapi.RouteQueryFunc, error) {
			q, err := opts.NewQuery(cfg, logger)
			return q, promapi.VectorRoutes(q), err
		}
	}
	ld, err := r.load()
	if err != nil {
		r.metrics.ConfigReload(false, opts.Now())
		return nil, err
	}
	if r.alerts, err = alerting.New(ld.cfg.Alerting, ld.cfg.Global.EvaluationInterval, opts.Registerer, opts.Logger); err != nil {
		return nil, err
	}
	r.swap(ld)
	r.metrics.ConfigReload(true, opts.Now())
	return r, nil
}

// prometheusQueries builds the query side over the Prometheus HTTP API:
// one promapi.Client, whose Query serves restore and whose QueryRoutes
// the ticks (answers at 10,000 routes are too large to decode as
// vectors); the two keep one contract (promapi.TestQueryContract).
func prometheusQueries(cfg *rules.Config, logger *slog.Logger) (promapi.QueryFunc, promapi.RouteQueryFunc, error) {
	c, err := promapi.New(cfg.Prometheus, cfg.Global.QueryTimeout, logger)
	if err != nil {
		return nil, nil, err
	}
	return c.Query, c.QueryRoutes, nil
}

// loaded is everything built from one version of the configuration.
type loaded struct {
	cfg   *rules.Config
	pol   *evaluator.Policy
	query promapi.QueryFunc
	ticks promapi.RouteQueryFunc
	acts  []actuators.Actuator
}

// load reads, validates and builds a configuration without touching the
// running one, so a bad file can be rejected whole.
func (r *Runner) load() (*loaded, error) {
	cfg, err := rules.Load(r.opts.ConfigPath)
	if err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%s is invalid:\n%w", r.opts.ConfigPath, err)
	}
	pol, err := evaluator.NewPolicy(cfg)
	if err != nil {
		return nil, err
	}
	q, ticks, err := r.newQuery(cfg, r.log)
	if err != nil {
		return nil, err
	}
	acts, err := r.opts.Actuators.Build(cfg.Actuators, r.log)
	if err == nil {
		err = actuators.Preflight(acts)
	}
	if err == nil && r.opts.Replica != "" {
		err = actuators.CheckStamps(cfg.Actuators, acts)
	}
	if err != nil {
		return nil, cfg.Locate(err)
	}
	return &loaded{cfg: cfg, pol: pol, query: q, ticks: ticks, acts: acts}, nil
}

func (r *Runner) swap(ld *loaded) {
	r.mu.Lock()
	defer r.mu.Unlock()
	actuators.CarryRateLimits(r.actuators, ld.acts) // a reload must not reset a limited move
	r.forgetActuators(ld.acts)
	r.cfg, r.pol, r.query, r.ticks, r.actuators = ld.cfg, ld.pol, ld.query, ld.ticks, ld.acts
	r.loadedAt = r.opts.Now()
}

// Ready reports whether the state was restored and the last tick had
// data: at least one of its signal queries answered (a value or no
// sample), not all of them failed. Otherwise the levels are placeholders
// or stale, and the actuators write nothing (hold.go). The runner is the one owner of this notion: /-/ready, the
// status API and `hermes ctl` ask it.
func (r *Runner) Ready() bool { return r.ready.Load() }

// Ticked reports whether a first tick ran since start, with or without data.
func (r *Runner) Ticked() bool { return r.ticked.Load() }

// hadData reports whether at least one signal query of the snapshot
// answered: a value or no sample, not an error.
func hadData(snap evaluator.Snapshot) bool {
	for _, smp := range snap.All() {
		if smp.Status != evaluator.StatusError {
			return true
		}
	}
	return false
}

// Run restores state, then ticks until ctx is done. Ticks are aligned to
// multiples of the evaluation interval; a tick that overruns makes the loop
// skip the ticks it missed (counted), never stack them.
func (r *Runner) Run(ctx context.Context) error {
	if err := r.restore(ctx); err != nil {
		return err
	}
	alertsDone := make(chan struct{})
	go func() { r.alerts.Run(ctx); close(alertsDone) }()
	defer func() { r.alerts.Stop(); <-alertsDone }() // deliver what is queued before exiting
	reloadsDone := make(chan struct{})
	go func() { r.runReloads(ctx); close(reloadsDone) }()
	defer func() { <-reloadsDone }()
	for {
		r.mu.Lock()
		interval := r.cfg.Global.EvaluationInterval
		r.mu.Unlock()
		now := r.opts.Now()
		next := now.Truncate(interval).Add(interval)
		timer := time.NewTimer(next.Sub(now))
		select {
		case <-ctx.Done():
			timer.Stop()
			r.log.Info("stopping")
			return nil
		case <-timer.C:
		}
		start := r.opts.Now()
		r.tick(ctx, next)
		end := r.opts.Now()
		r.metrics.ObserveTick(end.Sub(start), next)
		if missed := int(end.Sub(next) / interval); missed > 0 {
			for range missed {
				r.metrics.TickSkipped()
			}
			r.log.Warn("tick overran its interval; skipping missed ticks", "tick", next, "took", end.Sub(start), "skipped", missed)
		}
	}
}

// tick runs one evaluation at the aligned time ts.
func (r *Runner) tick(ctx context.Context, ts time.Time) {
	r.mu.Lock()
	cfg, pol, query, acts, prev := r.cfg, r.pol, r.ticks, r.actuators, r.state
	cmds := r.pending
	r.pending, r.inflight = nil, cmds
	health := make(map[string]evaluator.ActuatorHealth, len(r.lastActs))
	for name, a := range r.lastActs {
		health[name] = evaluator.ActuatorHealth{OK: a.OK, FailingSince: a.FailingSince, Error: a.Error}
	}
	r.mu.Unlock()

	tctx, cancel := context.WithTimeout(ctx, cfg.Global.EvaluationInterval)
	defer cancel()
	qerrs := newQueryErrors(cfg.Signals)
	snap := r.collector.Collect(tctx, qerrs.wrap(query), cfg.Signals, pol.Routes(), ts, cfg.Global.QueryTimeout)
	if ctx.Err() != nil {
		// Hermes is stopping: the queries were canceled, not answered. The
		// tick is dropped rather than judged, counted and exported as if
		// every signal had failed; its commands go back to the queue.
		r.mu.Lock()
		r.pending, r.inflight = append(cmds, r.pending...), nil
		r.mu.Unlock()
		r.log.Info("tick dropped: stopping", "tick", ts)
		return
	}
	snap.Actuators = health
	problems := signalProblems(snap, cfg.Signals, qerrs.failed)
	logSignalProblems(r.log, problems)
	in := evaluator.Input{Snapshot: snap, Commands: make([]evaluator.Command, len(cmds))}
	for i, c := range cmds {
		in.Commands[i] = c.cmd
	}
	next, events := evaluator.Step(pol, prev, in, ts)

	r.mu.Lock()
	r.state, r.lastTick, r.inflight, r.problems = next, ts, nil, problems
	r.noteAlertErrors(events)
	r.history.Add(evaluator.TickOf(ts, next), events)
	r.mu.Unlock()
	// The overrides file follows the state; a failed write is retried
	// every tick until it succeeds, so a restart does not lose an override,
	// nor an alert that began since Prometheus last scraped Hermes.
	if r.overridesUnsaved || !maps.EqualFunc(prev.Overrides, next.Overrides, evaluator.Override.Equal) ||
		!maps.EqualFunc(prev.Drills, next.Drills, sameDrill) || !persist.SameActive(prev.Alerts, next.Alerts) {
		err := saveOverrides(r.opts.OverridesPath, next, ts)
		r.overridesUnsaved = err != nil
		if err != nil {
			r.log.Error("cannot save the overrides file; retrying every tick (the overrides hold meanwhile, but not across a restart)", "file", r.opts.OverridesPath, "err", err)
		}
	}
	answer(cmds, events, ts)
	r.metrics.Update(pol, next, snap, ts)
	for _, e := range events {
		r.audit(e)
	}
	r.auditDryRuns(prev, next, ts)
	data := hadData(snap)
	r.mu.Lock()
	held := r.heldServices(next, data)
	r.mu.Unlock()
	for svc, why := range r.actuate(tctx, acts, next, ts, cfg.Global.EvaluationInterval, held) {
		if _, ok := held[svc]; !ok {
			held[svc] = why
		}
	}
	r.noteHolds(next, held)
	r.alerts.Notify(ctx, next.Alerts, ts)
	if !r.ticked.Load() {
		r.ticked.Store(true)
		r.log.Info("first tick done", "tick", ts)
	}
	switch was := r.ready.Swap(data); {
	case data && !was:
		r.log.Info("ready: the tick had data from Prometheus", "tick", ts)
	case !data:
		r.log.Warn("not ready: every signal query of the tick failed; writing nothing to the backends but operators' pins and pauses", "tick", ts)
	}
}
