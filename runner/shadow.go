package runner

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/promapi"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
)

// shadowDifferences is how many of the candidate's latest differences the
// stage keeps for the status page, the API and explain; Prometheus keeps
// the rest (hermes_candidate_differences_total and the candidate's series).
const shadowDifferences = 100

// shadowStage evaluates a candidate policy beside the live one
// (--candidate.file): every tick, one more evaluator.Step with its own
// state on the tick's snapshot. The candidate never actuates and never
// pages: this stage only keeps its state, exports it as hermes_candidate_*
// series and tells where its decisions differ from live's
// (evaluator.Difference).
//
// At the first tick and at the first tick after each reload of the live
// configuration, the candidate file is read again and the candidate's
// state is seeded from live's state before the tick, so nothing jumps:
// promoting the candidate (it becomes the configuration, then a reload)
// goes on from where live was, and a candidate started now judges from
// where live stands.
//
// The candidate's signals are usually live's (a threshold, a dwell, a
// weight changed): then it reads the very snapshot live read. When its
// signals or routes differ, it collects its own snapshot, at the same
// aligned time from the same Prometheus, with a Collector of its own:
// collecting twice rather than the union, because the two files may give
// one signal name two queries, and the core reads a snapshot's columns
// in its policy's order. That costs one query per candidate signal, and
// only while they differ.
type shadowStage struct {
	path string
	log  *slog.Logger
	now  func() time.Time
	// collector gathers the candidate's own snapshot when its signals
	// differ from live's; only the loop's goroutine uses it.
	collector promapi.Collector

	mu sync.Mutex
	// cfg and pol are the candidate; loadErr the last load's failure (the
	// previous candidate keeps running), loadedAt its last good load.
	cfg      *config.Config
	pol      *evaluator.Policy
	loadErr  error
	loadedAt time.Time
	// live is the live configuration the state was last seeded under: a
	// new one (a reload) reads the file again and seeds again.
	live     *config.Config
	seededAt time.Time
	state    evaluator.State
	// lastTick is the last tick evaluated; diffs the latest differences,
	// oldest first.
	lastTick time.Time
	diffs    []evaluator.Difference
	// counted are hermes_candidate_differences_total's counts, by policy
	// and event type; queryErrors hermes_candidate_query_errors_total's,
	// by signal and reason.
	counted     map[[2]string]float64
	queryErrors map[[2]string]float64
}

// newShadowStage loads the candidate at path; a candidate that does not
// load stops Hermes at start-up, as the live configuration does. The
// stage's series are registered on reg.
func newShadowStage(path string, live *config.Config, reg prometheus.Registerer, log *slog.Logger, now func() time.Time) (*shadowStage, error) {
	s := &shadowStage{path: path, log: log.With("candidate", path), now: now,
		counted: map[[2]string]float64{}, queryErrors: map[[2]string]float64{}}
	cfg, pol, err := loadCandidate(path, live)
	if err != nil {
		return nil, err
	}
	s.cfg, s.pol, s.loadedAt = cfg, pol, now()
	reg.MustRegister(shadowCollector{s})
	return s, nil
}

// loadCandidate reads and validates the candidate file. It must keep
// live's evaluation interval, so that its ticks are live's.
func loadCandidate(path string, live *config.Config) (*config.Config, *evaluator.Policy, error) {
	cfg, err := config.Load(path)
	if err != nil {
		return nil, nil, fmt.Errorf("candidate: %w", err)
	}
	if err := cfg.Validate(); err != nil {
		return nil, nil, fmt.Errorf("candidate %s is invalid:\n%w", path, err)
	}
	if cfg.Global.EvaluationInterval != live.Global.EvaluationInterval {
		return nil, nil, fmt.Errorf("candidate %s: global.evaluation_interval %s differs from the live configuration's %s; the candidate must tick with live",
			path, cfg.Global.EvaluationInterval, live.Global.EvaluationInterval)
	}
	pol, err := evaluator.NewPolicy(cfg.Rules())
	if err != nil {
		return nil, nil, fmt.Errorf("candidate %s: %w", path, err)
	}
	return cfg, pol, nil
}

// Tick evaluates the candidate on the tick's snapshot and records where
// it differs from live.
func (s *shadowStage) Tick(ctx context.Context, t *tickResult) {
	s.mu.Lock()
	reseed := s.live != t.Config
	s.mu.Unlock()
	if reseed {
		s.reseed(t)
	}
	s.mu.Lock()
	pol, st := s.pol, s.state
	s.mu.Unlock()

	snap := t.Snapshot
	var failed map[[2]string]bool
	if !sameColumns(pol, t.Policy) {
		snap = s.collector.Collect(ctx, t.Query, pol.Config.Signals, pol.Routes(), t.Time, t.Config.Global.QueryTimeout)
		snap.Actuators = t.Snapshot.Actuators
		failed = failedQueries(pol, snap)
	}
	next, events := evaluator.Step(pol, st, evaluator.Input{Snapshot: snap, Commands: commandsOf(t.commands)}, t.Time)
	diffs := evaluator.Differences(
		evaluator.Decisions{Name: "candidate", Events: events, Level: levelIn(next), Split: splitIn(next)},
		evaluator.Decisions{Name: "live", Events: t.Events, Level: levelIn(t.Next), Split: splitIn(t.Next)})

	s.mu.Lock()
	s.state, s.lastTick = next, t.Time
	for _, d := range diffs {
		s.counted[[2]string{d.By, d.Event.Type}]++
	}
	for k := range failed {
		s.queryErrors[k]++
	}
	s.diffs = append(s.diffs, diffs...)
	if over := len(s.diffs) - shadowDifferences; over > 0 {
		s.diffs = slices.Delete(s.diffs, 0, over)
	}
	s.mu.Unlock()
	if len(diffs) > 0 {
		// One line per tick that differs, however many routes: the
		// differences are on the page, the API and in the series.
		s.log.Info("the candidate policy decided differently from live", "tick", t.Time, "differences", len(diffs), "first", diffs[0].String())
	}
}

// reseed reads the candidate file again (after a reload of the live
// configuration, or at the first tick) and seeds the candidate's state
// from live's before the tick. A file that no longer loads keeps the
// previous candidate running, reported in View and logged.
func (s *shadowStage) reseed(t *tickResult) {
	first := s.live == nil
	var cfg *config.Config
	var pol *evaluator.Policy
	var err error
	if !first {
		cfg, pol, err = loadCandidate(s.path, t.Config)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case err != nil:
		s.loadErr = err
		s.log.Error("candidate policy rejected; the previous candidate keeps running", "err", err)
	case !first:
		s.cfg, s.pol, s.loadErr, s.loadedAt = cfg, pol, nil, s.now()
	}
	s.live, s.state, s.seededAt = t.Config, t.Prev, t.Time
	s.log.Info("candidate policy seeded from the live state", "tick", t.Time, "routes", len(s.pol.Routes()))
}

// failedQueries returns the signals and reasons of the queries that
// failed in snap, a snapshot the candidate collected itself: one failed
// query errs for every route, and is counted once a tick, as live's
// hermes_query_errors_total counts (runner/telemetry).
func failedQueries(pol *evaluator.Policy, snap evaluator.Snapshot) map[[2]string]bool {
	var failed map[[2]string]bool
	for _, route := range pol.Routes() {
		row := snap.Row(route)
		for _, sig := range pol.Config.Signals {
			smp := row.Get(sig.Name)
			if smp.Status != evaluator.StatusError {
				continue
			}
			reason := smp.Reason
			if reason == "" {
				reason = "unknown"
			}
			if failed == nil {
				failed = map[[2]string]bool{}
			}
			failed[[2]string{sig.Name, reason}] = true
		}
	}
	return failed
}

// sameColumns reports whether a snapshot collected for live has the
// candidate's rows and columns from the same queries, so the candidate can
// read it as it is.
func sameColumns(cand, live *evaluator.Policy) bool {
	if !slices.Equal(cand.Routes(), live.Routes()) || len(cand.Config.Signals) != len(live.Config.Signals) {
		return false
	}
	if !slices.Equal(rules.Columns(cand.Config.Signals), rules.Columns(live.Config.Signals)) {
		return false
	}
	for i, sig := range cand.Config.Signals {
		if sig.TickQuery() != live.Config.Signals[i].TickQuery() {
			return false
		}
	}
	return true
}

// levelIn reads a route's level from st, for evaluator.Decisions.
func levelIn(st evaluator.State) func(route string, _ time.Time) string {
	return func(route string, _ time.Time) string {
		if rs := st.Routes[route]; rs != nil {
			return rs.Level.String()
		}
		return "without the route"
	}
}

// splitIn reads a service's split from st, for evaluator.Decisions.
func splitIn(st evaluator.State) func(service string, _ time.Time) map[string]int {
	return func(service string, _ time.Time) map[string]int {
		if sp := st.Services[service]; sp != nil {
			return sp.Weights
		}
		return nil
	}
}

// CandidateView is the candidate policy as the loop last left it: the
// status page, the API and explain read it.
type CandidateView struct {
	// File is the candidate file (--candidate.file); LoadedAt its last
	// good load, Error the last load's failure ("" when it loaded).
	File     string
	LoadedAt time.Time
	Error    string
	// SeededAt is the tick whose state before it seeded the candidate's:
	// the first tick, or the first after the last reload.
	SeededAt time.Time
	LastTick time.Time
	Config   *config.Config
	Policy   *evaluator.Policy
	State    evaluator.State
	// Differences are the latest decisions that differed from live's,
	// oldest first (at most 100).
	Differences []evaluator.Difference
}

// view returns a copy of what the stage holds; nil without a candidate.
func (s *shadowStage) view() *CandidateView {
	if s == nil {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	v := &CandidateView{File: s.path, LoadedAt: s.loadedAt, SeededAt: s.seededAt, LastTick: s.lastTick,
		Config: s.cfg, Policy: s.pol, State: s.state, Differences: slices.Clone(s.diffs)}
	if s.loadErr != nil {
		v.Error = s.loadErr.Error()
	}
	return v
}

// The candidate's series: the same quantities as live's level, score,
// split and alerts, under names of their own. Not a policy="candidate"
// label on live's names: Hermes's alert rules, dashboards and restore
// read live's names, and a candidate's series there would page, draw and
// restore as if they were live's.
var (
	candidateLevelDesc = prometheus.NewDesc("hermes_candidate_route_level",
		"Level of the route under the candidate policy (--candidate.file), as hermes_route_level: 0 normal … 4 manual.", []string{"route"}, nil)
	candidateScoreDesc = prometheus.NewDesc("hermes_candidate_route_score",
		"Health score of the route under the candidate policy, 0..100.", []string{"route"}, nil)
	candidateStageDesc = prometheus.NewDesc("hermes_candidate_failback_stage",
		"Failback stage of the route under the candidate policy; 0 when none.", []string{"route"}, nil)
	candidateRatioDesc = prometheus.NewDesc("hermes_candidate_route_traffic_ratio",
		"Share of the service's traffic the candidate policy would send to the route, 0 to 1; never applied.", []string{"service", "route"}, nil)
	candidateAlertDesc = prometheus.NewDesc("hermes_candidate_alerts",
		"Alerts pending or firing under the candidate policy, as ALERTS; never sent.", []string{"alertname", "alertstate", "tier", "service", "route", "actuator"}, nil)
	candidateDiffDesc = prometheus.NewDesc("hermes_candidate_differences_total",
		"Decisions (level, failback, traffic, alert events) one policy made at a tick that the other did not, by the policy that made them (candidate or live) and event type.", []string{"policy", "type"}, nil)
	candidateQueryErrDesc = prometheus.NewDesc("hermes_candidate_query_errors_total",
		"Failed signal queries of the candidate policy's own signals (those it collects itself because they differ from live's), by signal and reason, as hermes_query_errors_total counts live's.", []string{"signal", "reason"}, nil)
	candidateLoadDesc = prometheus.NewDesc("hermes_candidate_config_last_load_successful",
		"1 when the last load of the candidate file succeeded; 0 when the previous candidate keeps running.", nil, nil)
)

// shadowCollector exports the candidate's series at scrape time from the
// stage's last state, as Alertmanager's dispatch metrics are.
type shadowCollector struct{ s *shadowStage }

// Describe sends the descriptors of the candidate's series.
func (c shadowCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{candidateLevelDesc, candidateScoreDesc, candidateStageDesc, candidateRatioDesc, candidateAlertDesc, candidateDiffDesc, candidateQueryErrDesc, candidateLoadDesc} {
		ch <- d
	}
}

// Collect sends the candidate's series.
func (c shadowCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.s
	s.mu.Lock()
	pol, st, loadErr := s.pol, s.state, s.loadErr
	counted := make(map[[2]string]float64, len(s.counted))
	for k, v := range s.counted {
		counted[k] = v
	}
	queryErrors := maps.Clone(s.queryErrors)
	s.mu.Unlock()
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	ok := 1.0
	if loadErr != nil {
		ok = 0
	}
	gauge(candidateLoadDesc, ok)
	for k, v := range counted {
		ch <- prometheus.MustNewConstMetric(candidateDiffDesc, prometheus.CounterValue, v, k[0], k[1])
	}
	for k, v := range queryErrors {
		ch <- prometheus.MustNewConstMetric(candidateQueryErrDesc, prometheus.CounterValue, v, k[0], k[1])
	}
	if s.lastTickZero() {
		return // not evaluated yet: no levels to show
	}
	for _, route := range pol.Routes() {
		rs := st.Routes[route]
		if rs == nil {
			continue
		}
		gauge(candidateLevelDesc, float64(rs.Level), route)
		gauge(candidateScoreDesc, rs.Score.Value, route)
		gauge(candidateStageDesc, float64(rs.Stage), route)
	}
	for _, svc := range pol.Config.Services {
		sp := st.Services[svc.Name]
		if sp == nil {
			continue
		}
		for _, route := range svc.Routes {
			gauge(candidateRatioDesc, float64(sp.Weights[route])/100, svc.Name, route)
		}
	}
	for _, a := range st.Alerts {
		if a.Active() {
			gauge(candidateAlertDesc, 1, a.Rule, a.State.String(), a.Tier, a.Service, a.Route, a.Actuator)
		}
	}
}

func (s *shadowStage) lastTickZero() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastTick.IsZero()
}
