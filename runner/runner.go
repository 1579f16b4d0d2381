// Package runner is the live shell around the evaluator core. One tick:
//
//	promapi.Collector     one PromQL query per signal, each answer streamed
//	                      into route slots → evaluator.Snapshot (plus the
//	                      actuators' health after the last tick)
//	evaluator.Step        the pure core, with the operator commands queued
//	                      since the last tick → next State and Events
//
// then each stage's Tick with the tick's result (tick.Result), in order:
//
//	persist               the local state file (overrides, drills, active
//	                      alerts), the saved series; at start-up, all of
//	                      restore (runner/persist)
//	telemetry             the state as Hermes's own series
//	                      (runner/telemetry)
//	audit                 one JSON line per event, and its log line
//	                      (runner/audit)
//	(publish, answer)     the loop's own: the state made what the status
//	                      API and the next tick read, then the replies to
//	                      the tick's commands
//	actuation             withhold, lease, re-assert State.Services on
//	                      every backend, keep what each took (the rate
//	                      limit steps from it); audit dry-run drills
//	                      (runner/actuation)
//	alerting              queue State.Alerts for every Alertmanager,
//	                      each sent with its text rendered
//	                      (runner/alerting)
//	shadow                with --candidate.file: one more Step of the
//	                      candidate policy, its own state, never applied
//	                      nor sent; where it differs from live (shadow.go)
//
// Each stage owns its state, metrics and lock, and no stage's package
// imports another's (TestStagesKeepToThemselves); the Runner keeps the
// tick timing, the command queue, the reloads and the last tick's
// result, and wires the stages. The
// loop goroutine is the only writer of the state: operator commands
// (Submit) are queued and applied by the next tick's Step; reloads are
// loaded beside the loop, coalesced and rate-limited (reload.go), and
// taken by the next tick.
package runner

import (
	"context"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/promapi"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/runner/actuation"
	"github.com/hermes-failover/hermes/runner/alerting"
	"github.com/hermes-failover/hermes/runner/audit"
	"github.com/hermes-failover/hermes/runner/auditlog"
	"github.com/hermes-failover/hermes/runner/condlog"
	"github.com/hermes-failover/hermes/runner/history"
	"github.com/hermes-failover/hermes/runner/persist"
	"github.com/hermes-failover/hermes/runner/telemetry"
	"github.com/hermes-failover/hermes/runner/tick"
)

// Options configure a Runner. ConfigPath is required.
type Options struct {
	ConfigPath string
	// OverridesPath is the local state file: what must survive a restart
	// and Prometheus may not know yet, the operators' overrides, running
	// drills and active alerts (persist.Local). Default: hermes-state.json
	// next to the config file, or hermes-overrides.json there, its old
	// name, until Hermes first saves it (--overrides.file).
	OverridesPath string
	Logger        *slog.Logger
	Registerer    prometheus.Registerer
	// Audit receives one JSON object per level change, actuation and override.
	Audit *auditlog.Log
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
	// not overwrite another replica's fresh, different split (the
	// actuation stage's leases).
	// Every actuator must carry the stamp (actuators.CheckStamps), and
	// the name must pass actuation.CheckReplicaName. Empty: one writer, nothing
	// stamped.
	Replica string
	// CandidatePath is a candidate policy evaluated beside the live one
	// every tick, never applied nor sent (--candidate.file, shadow.go);
	// empty: none.
	CandidatePath string
	// Now reads the wall clock; tests replace it.
	Now func() time.Time
	// Elapsed reads the monotonic clock: the time since an origin of its
	// own, which no change of the wall clock moves. The replicas' leases
	// (runner/actuation) and the wall-clock jump check (clock.go) measure with
	// it; tests replace it. Default: the time since New by Go's
	// monotonic clock.
	Elapsed func() time.Duration
	// NewQuery builds the query side from the configuration; nil means the
	// Prometheus HTTP API at prometheus.url, whose tick answers are decoded
	// straight into route slots (promapi.Client.QueryRoutes).
	NewQuery func(cfg *config.Config, logger *slog.Logger) (promapi.QueryFunc, error)
}

// Runner runs the tick loop: it keeps the tick timing, the command queue,
// the reloads and the last tick's result, and hands every tick to the
// stages (stage.go), which own the rest. Its methods are safe for
// concurrent use.
type Runner struct {
	opts Options
	log  *slog.Logger
	// newQuery builds the query side (Options.NewQuery, else Prometheus).
	newQuery func(cfg *config.Config, logger *slog.Logger) (promapi.QueryFunc, promapi.RouteQueryFunc, func(), error)
	// collector gathers each tick's answers into its snapshot; only the
	// loop's goroutine uses it (tick).
	collector promapi.Collector
	// stages run after each Step, in order (pipeline).
	stages  pipeline
	reloads reloadQueue

	// mu guards what follows, but status (atomic).
	mu sync.Mutex
	// loaded is the running configuration; a reload swaps it whole.
	loaded
	// lastResult is what the last tick left.
	lastResult
	// history is the status page's fallback when Prometheus cannot answer.
	history *history.Store
	cmds    commandQueue
	status  readiness
}

// loaded is everything built from one version of the configuration.
type loaded struct {
	cfg   *config.Config
	pol   *evaluator.Policy
	query promapi.QueryFunc
	ticks promapi.RouteQueryFunc
	// closeQuery closes the query side's idle connections once no tick
	// uses it (retire); nil when there is nothing to close.
	closeQuery func()
	acts       []actuators.Actuator
	// loadedAt is when it was swapped in.
	loadedAt time.Time
}

// lastResult is what the last tick left: its time, its state and its
// failed signal queries.
type lastResult struct {
	lastTick time.Time
	state    evaluator.State
	problems []SignalProblem
}

// readiness is set by the loop and read by anyone without the lock:
// ticked by the first tick, ready by the first tick that had data (see
// Ready).
type readiness struct {
	ticked, ready atomic.Bool
	// logged are the lasting conditions of the loop (not ready, failed
	// signal queries, overruns), logged when they start, change and end
	// (condlog.Log); only the loop's goroutine uses it.
	logged *condlog.Log
}

// pipeline holds the stages a tick runs after evaluator.Step, in order,
// and the ones the loop also asks between ticks (health of the
// actuators, restore, reload, the status page's view).
type pipeline struct {
	order     []stage
	persist   *persist.Stage
	telemetry *telemetry.Stage
	actuation *actuation.Stage
	alerting  *alerting.Stage
	// shadow is the candidate policy's stage; nil without one.
	shadow *shadowStage
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
	if opts.Elapsed == nil {
		origin := time.Now()
		opts.Elapsed = func() time.Duration { return time.Since(origin) }
	}
	if opts.Actuators == nil {
		opts.Actuators = &actuators.Registry{}
	}
	if opts.ReloadInterval == 0 {
		opts.ReloadInterval = time.Second
	}
	if err := actuation.CheckReplicaName(opts.Replica); err != nil {
		return nil, err
	}
	opts.Audit.Register(opts.Registerer, opts.Logger)
	persisting := persist.NewStage(persist.StageOptions{Path: opts.OverridesPath, ConfigPath: opts.ConfigPath, Restore: opts.Restore,
		Logger: opts.Logger, Audit: opts.Audit, Registerer: opts.Registerer, Now: opts.Now})
	opts.OverridesPath = persisting.Path()
	r := &Runner{
		history:  history.New(historyTicks, historyEvents),
		opts:     opts,
		log:      opts.Logger,
		reloads:  reloadQueue{kick: make(chan struct{}, 1)},
		status:   readiness{logged: condlog.New(opts.Logger)},
		newQuery: prometheusQueries,
		stages: pipeline{
			persist:   persisting,
			telemetry: telemetry.NewStage(opts.Registerer, opts.Metrics),
			actuation: actuation.New(actuation.Options{Replica: opts.Replica, Now: opts.Now, Elapsed: opts.Elapsed,
				Logger: opts.Logger, Audit: opts.Audit, Registerer: opts.Registerer}),
		},
	}
	if opts.NewQuery != nil {
		r.newQuery = func(cfg *config.Config, logger *slog.Logger) (promapi.QueryFunc, promapi.RouteQueryFunc, func(), error) {
			q, err := opts.NewQuery(cfg, logger)
			return q, promapi.VectorRoutes(q), nil, err
		}
	}
	ld, err := r.load()
	if err != nil {
		r.stages.telemetry.ConfigReload(false, opts.Now())
		return nil, err
	}
	sender, err := alerting.New(ld.cfg.Alerting, ld.cfg.Global.EvaluationInterval, opts.Registerer, opts.Logger)
	if err != nil {
		return nil, err
	}
	r.stages.alerting = alerting.NewStage(sender)
	if opts.CandidatePath != "" {
		if r.stages.shadow, err = newShadowStage(opts.CandidatePath, ld.cfg, opts.Registerer, opts.Logger, opts.Now); err != nil {
			return nil, err
		}
	}
	// The order of a tick: the restart memory first, then the series and
	// the audit log, and only then the tick's state published to the
	// status API and each command's caller answered, so that what they
	// see is saved and on record; then the backends and Alertmanager,
	// which may wait on a slow receiver and so come after.
	r.stages.order = []stage{
		ownPackage{r.stages.persist},
		ownPackage{r.stages.telemetry},
		ownPackage{audit.New(opts.Logger, opts.Audit)},
		stageFunc(r.publish),
		stageFunc(answerCommands),
		ownPackage{r.stages.actuation},
		ownPackage{r.stages.alerting},
	}
	// The candidate last: its queries, when it has its own, never delay
	// what live writes and sends.
	if r.stages.shadow != nil {
		r.stages.order = append(r.stages.order, r.stages.shadow)
	}
	r.swap(ld)
	r.stages.telemetry.ConfigReload(true, opts.Now())
	return r, nil
}

// prometheusQueries builds the query side over the Prometheus HTTP API:
// one promapi.Client, whose Query serves restore and whose QueryRoutes
// the ticks (answers at 10,000 routes are too large to decode as
// vectors); the two keep one contract (promapi.TestQueryContract). The
// third result closes the client's idle connections (see retire).
func prometheusQueries(cfg *config.Config, logger *slog.Logger) (promapi.QueryFunc, promapi.RouteQueryFunc, func(), error) {
	c, err := promapi.New(cfg.Prometheus, cfg.Global.QueryTimeout, logger)
	if err != nil {
		return nil, nil, nil, err
	}
	return c.Query, c.QueryRoutes, c.CloseIdleConnections, nil
}

// load reads, validates and builds a configuration without touching the
// running one, so a bad file can be rejected whole.
func (r *Runner) load() (*loaded, error) {
	cfg, err := config.Load(r.opts.ConfigPath)
	if err != nil {
		return nil, err
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("%s is invalid:\n%w", r.opts.ConfigPath, err)
	}
	pol, err := evaluator.NewPolicy(cfg.Rules())
	if err != nil {
		return nil, err
	}
	q, ticks, closeQuery, err := r.newQuery(cfg, r.log)
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
	return &loaded{cfg: cfg, pol: pol, query: q, ticks: ticks, closeQuery: closeQuery, acts: acts}, nil
}

// swap makes ld the running configuration; the next tick takes it.
func (r *Runner) swap(ld *loaded) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stages.actuation.Forget(ld.acts)
	ld.loadedAt = r.opts.Now()
	r.retire(r.loaded)
	r.loaded = *ld
}

// Ready reports whether the state was restored and the last tick had
// data: at least one of its signal queries answered (a value or no
// sample), not all of them failed. Otherwise the levels are placeholders
// or stale, and the actuators write nothing (runner/actuation withholds
// every service). The runner is
// the one owner of this notion: /-/ready, the status API and `hermes ctl`
// ask it.
func (r *Runner) Ready() bool { return r.status.ready.Load() }

// Ticked reports whether a first tick ran since start, with or without data.
func (r *Runner) Ticked() bool { return r.status.ticked.Load() }

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
	r.mu.Lock()
	pol, query, acts := r.pol, r.query, r.acts
	r.mu.Unlock()
	got, err := r.stages.persist.Restore(ctx, pol, query, acts)
	if err != nil {
		return err
	}
	r.mu.Lock()
	r.state = got.State
	r.mu.Unlock()
	r.stages.actuation.Restored(got.UnknownSplit)
	r.stages.alerting.Restored(got.IncidentStarts, got.State)
	alertsDone := make(chan struct{})
	go func() { r.stages.alerting.Run(ctx); close(alertsDone) }()
	defer func() { r.stages.alerting.Stop(); <-alertsDone }() // deliver what is queued before exiting
	reloadsDone := make(chan struct{})
	go func() { r.runReloads(ctx); close(reloadsDone) }()
	defer func() { <-reloadsDone }()
	var wall wallWatch // the wall clock against the monotonic one (clock.go)
	// An overrun is logged as a condition that holds until no tick has
	// overrun for condlog.RemindEvery: ticks that overrun now and then are one
	// line, not a start and an end each.
	var overrun condlog.Line
	var lastOverrun time.Time
	overruns := 0
	for {
		r.mu.Lock()
		interval := r.cfg.Global.EvaluationInterval
		r.mu.Unlock()
		// The tick's time is the wall clock's, as Prometheus stamps its
		// samples and Alertmanager reads alerts by theirs; what it waits
		// and how long it took are the monotonic clock's, and a jump of
		// the wall clock moves the state's times with it (clock.go).
		now, mono := r.opts.Now(), r.opts.Elapsed()
		if jump := wall.observe(now, mono); jump != 0 {
			r.wallJumped(jump, now)
		}
		next := now.Truncate(interval).Add(interval)
		due := mono + next.Sub(now)
		timer := time.NewTimer(next.Sub(now))
		select {
		case <-ctx.Done():
			timer.Stop()
			r.log.Info("stopping")
			return nil
		case <-timer.C:
		}
		start := r.opts.Elapsed()
		r.tick(ctx, next)
		end := r.opts.Elapsed()
		r.stages.telemetry.ObserveTick(end-start, next)
		if missed := int((end - due) / interval); missed > 0 {
			for range missed {
				r.stages.telemetry.TickSkipped()
			}
			if next.Sub(lastOverrun) >= condlog.RemindEvery {
				overruns = 0
			}
			overruns++
			lastOverrun = next
			overrun = condlog.Line{Level: slog.LevelWarn, Msg: "tick overran its interval; skipping missed ticks",
				Attrs: []any{"tick", next, "took", end - start, "skipped", missed, "overruns", overruns},
				End:   "ticks on time again: none overran for " + condlog.RemindEvery.String(), EndAttrs: []any{"overruns", overruns}}
		}
		overran := map[string]condlog.Line{}
		if !lastOverrun.IsZero() && next.Sub(lastOverrun) < condlog.RemindEvery {
			overran[""] = overrun
		}
		r.status.logged.Observe(next, "overran", overran)
	}
}

// publish is the tick's stage that makes its state the loop's: what the
// status API, the history and the next tick read. It runs after the
// restart memory and the audit log have the tick, so that nothing a
// caller sees is missing from either.
func (r *Runner) publish(_ context.Context, t *tickResult) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.state, r.lastTick, r.problems = t.Next, t.Time, t.problems
	r.cmds.inflight = nil
	r.history.AddState(t.Time, t.Next, dryRunSplits(t.Next), t.Events)
}

// tick runs one evaluation at the aligned time ts: collect, then
// evaluator.Step with the commands queued since the last tick, then every
// stage in order with the tick's result.
func (r *Runner) tick(ctx context.Context, ts time.Time) {
	r.mu.Lock()
	t := &tickResult{Result: tick.Result{Time: ts, Config: r.cfg, Policy: r.pol, Actuators: r.acts, Prev: r.state, Query: r.ticks,
		IncidentStarts: r.stages.alerting.IncidentStarts()}, commands: r.cmds.take()}
	query := r.ticks
	retired := r.takeRetired()
	r.mu.Unlock()
	closeAll(retired)
	health := r.stages.actuation.Health()

	cfg := t.Config
	tctx, cancel := context.WithTimeout(ctx, cfg.Global.EvaluationInterval)
	defer cancel()
	qerrs := newQueryErrors(cfg.Signals)
	snap := r.collector.Collect(tctx, qerrs.wrap(query), cfg.Signals, t.Policy.Routes(), ts, cfg.Global.QueryTimeout)
	if ctx.Err() != nil {
		// Hermes is stopping: the queries were canceled, not answered. The
		// tick is dropped rather than judged, counted and exported as if
		// every signal had failed; its commands go back to the queue.
		r.mu.Lock()
		r.cmds.putBack(t.commands)
		r.mu.Unlock()
		r.log.Info("tick dropped: stopping", "tick", ts)
		return
	}
	snap.Actuators = health
	// A healthy tick has no error sample to look for: the collector
	// counted them while building the snapshot.
	problems := []SignalProblem{}
	if r.collector.Errors() > 0 {
		problems = signalProblems(snap, cfg.Signals, qerrs.failed)
	}
	r.status.logged.Observe(ts, "signal queries", signalConditions(problems))
	t.Snapshot, t.Data, t.NoErrorSamples = snap, hadData(snap), r.collector.Errors() == 0
	t.UnknownSplits = r.stages.actuation.UnknownSplits(t.Prev.Overrides)
	t.Next, t.Events = evaluator.Step(t.Policy, t.Prev, evaluator.Input{Snapshot: snap, Commands: commandsOf(t.commands), UnknownSplits: t.UnknownSplits,
		Applied: r.stages.actuation.AppliedSplits(cfg, t.Actuators)}, ts)

	t.problems = problems
	for _, s := range r.stages.order {
		s.Tick(tctx, t)
	}
	r.mu.Lock()
	for _, a := range t.Actuations {
		r.history.AddActuation(a)
	}
	r.mu.Unlock()
	if !r.status.ticked.Load() {
		r.status.ticked.Store(true)
		r.log.Info("first tick done", "tick", ts)
	}
	// Not ready is one line when it starts, a reminder now and then and
	// "ready" when it ends; the first ready tick says so once.
	notReady := map[string]condlog.Line{}
	if !t.Data {
		notReady[""] = condlog.Line{Level: slog.LevelWarn, Msg: "not ready: every signal query of the tick failed; writing nothing to the backends but operators' pins and pauses",
			End: "ready: the tick had data from Prometheus"}
	}
	wasNotReady := r.status.logged.Holds("ready", "")
	r.status.logged.Observe(ts, "ready", notReady)
	if was := r.status.ready.Swap(t.Data); t.Data && !was && !wasNotReady {
		r.log.Info("ready: the tick had data from Prometheus", "tick", ts)
	}
}
