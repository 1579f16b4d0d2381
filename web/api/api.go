// Package api holds the wire types of Hermes's HTTP API (/api/v1/...):
// what the status endpoint returns, what the admin endpoints take and the
// envelope they answer in (reply.go). The web handlers build and encode
// them, and `hermes ctl` and `hermes explain` decode the same types: there
// is no other copy of the wire format.
package api

import (
	"time"

	"github.com/hermes-failover/hermes/evaluator"
)

// Status is everything an operator needs at a glance; /api/v1/status serves
// it as JSON and / renders it as HTML.
type Status struct {
	// Ready is true once the state was restored and a tick had data from
	// Prometheus (see runner.Runner.Ready); Ticked once any tick ran.
	Ready      bool       `json:"ready"`
	Ticked     bool       `json:"ticked"`
	LastTick   time.Time  `json:"last_tick,omitzero"`
	Interval   string     `json:"evaluation_interval"`
	ConfigFile string     `json:"config_file"`
	LoadedAt   time.Time  `json:"config_loaded_at"`
	Services   []Service  `json:"services"`
	Alerts     []Alert    `json:"alerts"`
	Actuators  []Actuator `json:"actuators"`
	// Levels are the configured thresholds of the degraded levels, mildest
	// first: pages colour scores with them rather than with fixed numbers.
	Levels []Level `json:"levels"`
	// Drills are the running fault drills, by route.
	Drills []evaluator.Drill `json:"drills,omitempty"`
	// Problems say in words what keeps Hermes from judging with full data
	// at the last tick ("Prometheus unreachable: connection refused");
	// QueryErrors are the failed signal queries behind them.
	Problems    []string     `json:"problems,omitempty"`
	QueryErrors []QueryError `json:"query_errors,omitempty"`
	// AlertErrors are the alert expressions that failed at run time, the
	// last failure of each (the alert counted as not holding).
	AlertErrors []AlertError `json:"alert_errors,omitempty"`
	// Candidate is the candidate policy run beside the live one, with
	// --candidate.file (candidate.go).
	Candidate *Candidate `json:"candidate,omitempty"`
	// ReloadFailure is the last rejected reload since the last good one:
	// the configuration of LoadedAt keeps running. Absent once a reload
	// succeeds.
	ReloadFailure *ReloadFailure `json:"reload_failure,omitempty"`
}

// ReloadFailure is a rejected reload of the configuration.
type ReloadFailure struct {
	// At is the last rejected reload, Since the first of those in a row,
	// Count how many were rejected since the last good one.
	At    time.Time `json:"at"`
	Since time.Time `json:"since"`
	Count int       `json:"count"`
	Error string    `json:"error"`
}

// QueryError is a signal whose query failed at the last tick.
type QueryError struct {
	Signal string `json:"signal"`
	// Reason is the class of the failure (the reason label of
	// hermes_query_errors_total), Detail the failure in words.
	Reason string `json:"reason"`
	Detail string `json:"detail,omitempty"`
	// Routes is how many routes the signal has no value for.
	Routes int `json:"routes"`
}

// Score states of a Route: whether its Score is a judgement of this tick.
const (
	// ScoreJudged: the score is computed from this tick's data.
	ScoreJudged = "judged"
	// ScoreCarried: signals are missing; the score is the last one
	// computed with full data, carried over.
	ScoreCarried = "carried"
	// ScoreNotJudged: signals are missing and no score with full data was
	// ever computed: the number means nothing.
	ScoreNotJudged = "not judged"
)

// Level is a degraded level's threshold: a score below Below for its dwell
// moves a route into it.
type Level struct {
	Name  string  `json:"name"`
	Below float64 `json:"below"`
}

// Service is one service: its split, flags, override and routes.
type Service struct {
	Name           string              `json:"name"`
	Weights        map[string]int      `json:"weights"`
	Degraded       bool                `json:"degraded"`
	RetriesEnabled bool                `json:"retries_enabled"`
	Override       *evaluator.Override `json:"override,omitempty"`
	Routes         []Route             `json:"routes"`
	// Planned is, while a dry-run drill holds the service, the split
	// Hermes plans and does not apply; Weights (and each route's Traffic)
	// are the split the actuators keep.
	Planned map[string]int `json:"planned_weights,omitempty"`
	// SplitUnknown is true while Hermes does not know the service's split:
	// a restart could not learn what the backends hold, no tick has
	// decided it on data since, and no pin (or pause that froze a split)
	// gives it. Hermes writes nothing for the service then, and the
	// backends keep what they hold, which Hermes cannot see: Weights and
	// Planned are empty, and each route's traffic_percent is 0, meaning
	// unknown rather than no traffic.
	SplitUnknown bool `json:"split_unknown,omitempty"`
	// SplitUnknownAfterOverride is true while a pin (or a pause that froze
	// a split) gives a split that Hermes would not know without it: once
	// the override ends, the split is unknown (SplitUnknown) until a tick
	// decides it on data.
	SplitUnknownAfterOverride bool `json:"split_unknown_after_override,omitempty"`
	// Held is set when the last tick wrote the service to no backend.
	Held *Hold `json:"held,omitempty"`
}

// Hold says why the last tick wrote a service to no backend
// (hermes_service_actuation_held).
type Hold struct {
	// Reason is the reason label of hermes_service_actuation_held:
	// unknown_split (SplitUnknown), no_data (every signal query of the
	// tick failed) or replicas_disagree (another replica holds the
	// backend and wrote a different split).
	Reason string `json:"reason"`
	// Why says it in words.
	Why string `json:"why"`
}

// Route is one route of a service.
type Route struct {
	Name            string         `json:"name"`
	Score           float64        `json:"score"`
	Level           string         `json:"level"`
	Since           time.Time      `json:"since"`
	FailbackStage   int            `json:"failback_stage"`
	FailbackPercent int            `json:"failback_percent,omitempty"`
	StageSince      time.Time      `json:"stage_since,omitzero"`
	NextFailback    time.Time      `json:"next_failback_allowed,omitzero"`
	Released        bool           `json:"released,omitempty"`
	Traffic         int            `json:"traffic_percent"`
	Contributions   []Contribution `json:"contributions"`
	Missing         []string       `json:"missing,omitempty"`
	Reasons         []string       `json:"reasons"`
	// Placement says what holds the route at its level: floors, caps,
	// thresholds, dwell, hysteresis (see evaluator.Placement).
	Placement []string `json:"placement,omitempty"`
	// ScoreState says whether Score was judged at the last tick, carried
	// over from the last tick with full data, or never judged.
	ScoreState string `json:"score_state"`
	// State is the route's state in words, the most important first:
	// its level and what it waits for ("failed over: …"), why its score
	// is held ("held: Prometheus unreachable: …"), or that
	// it is idle ("idle: judged by its probes alone").
	State []string `json:"state"`
	// WaitsFor says in a line what the route waits for to move up (or,
	// normal, down), with the time left when a clock decides and the
	// calls when evidence does: "6m0s more (03:21:00Z) with a score ≥ 80,
	// for failback stage 1 (10%)". The long form is in State.
	WaitsFor []string `json:"waits_for,omitempty"`
	// Moved is what moved the route down, fixed at its last move down and
	// kept until it is back at normal (evaluator.Move): "failover at T
	// (why): signal value (-penalty): evidence; …"; empty at normal.
	Moved string `json:"moved,omitempty"`
}

// Alert is a pending or firing alert.
type Alert struct {
	Name     string            `json:"name"`
	Tier     string            `json:"tier"`
	State    string            `json:"state"`
	Service  string            `json:"service"`
	Route    string            `json:"route,omitempty"`
	Actuator string            `json:"actuator,omitempty"`
	ActiveAt time.Time         `json:"active_at"`
	Summary  string            `json:"summary,omitempty"`
	Runbook  string            `json:"runbook_url,omitempty"`
	Labels   map[string]string `json:"labels"`
}

// AlertError is the last run-time failure of one alert's expression.
type AlertError struct {
	Alert string `json:"alert"`
	// Service and Route are the target it last failed on.
	Service string `json:"service,omitempty"`
	Route   string `json:"route,omitempty"`
	Error   string `json:"error"`
	// At is the tick of the last failure, Since the first since Hermes
	// started; Count is how many evaluations failed since then.
	At    time.Time `json:"at"`
	Since time.Time `json:"since"`
	Count int       `json:"count"`
	// Failing is true when the last tick failed.
	Failing bool `json:"failing"`
}

// Actuator is the last outcome of one actuator.
type Actuator struct {
	Actuator string    `json:"actuator"`
	At       time.Time `json:"at"`
	OK       bool      `json:"ok"`
	Error    string    `json:"error,omitempty"`
	// FailingSince is when the actuator started failing without a success.
	FailingSince time.Time `json:"failing_since,omitzero"`
}

// ReleaseRequest is the body of POST /api/v1/admin/release.
type ReleaseRequest struct {
	Route  string `json:"route"`
	Reason string `json:"reason"`
	By     string `json:"by,omitempty"`
}

// OverrideRequest is the body of POST /api/v1/admin/overrides.
type OverrideRequest struct {
	Service string `json:"service"`
	Kind    string `json:"kind"` // pin or pause
	Route   string `json:"route,omitempty"`
	Reason  string `json:"reason"`
	By      string `json:"by,omitempty"`
	// ExpiresIn is a Go duration ("30m"); empty means no expiry.
	ExpiresIn string `json:"expires_in,omitempty"`
	// Replace lets a pause replace the service's pin, or a pin its pause,
	// and its expiry; without it either is refused
	// (evaluator.Command.Replace).
	Replace bool `json:"replace,omitempty"`
}

// DrillRequest is the body of POST /api/v1/admin/drills: from the next
// tick until For has passed, Route's Signals read the given values.
type DrillRequest struct {
	Route   string             `json:"route"`
	Signals map[string]float64 `json:"signals"`
	// For is a Go duration ("10m"), required: a drill ends by itself.
	For    string `json:"for"`
	Reason string `json:"reason"`
	By     string `json:"by,omitempty"`
	// DryRun: levels, splits and alerts follow the drill, the actuators
	// keep the split from before it.
	DryRun bool `json:"dry_run,omitempty"`
}
