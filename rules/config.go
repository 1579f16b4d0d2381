// Package rules is Hermes's policy as the core reads it: signals, scoring,
// levels, failback, services and alert rules, and the shipped default
// policy (hermes.yaml). It does no I/O: the loader, rules/config, reads
// files and the environment, validates and builds a Policy, and holds the
// rest of the configuration file (where Prometheus and Alertmanager are,
// the actuators).
package rules

import (
	"time"
)

// Policy is the part of the configuration file the core reads. The loader
// (rules/config) builds it, with every field its YAML keys do not set
// (SignalConfig's derived windows, ActuatorNames) filled in; a Policy
// made otherwise must be prepared by config.Config.Policy.
type Policy struct {
	Global   GlobalConfig      `yaml:"global" mapstructure:"global"`
	Signals  []SignalConfig    `yaml:"signals" mapstructure:"signals"`
	Scoring  ScoringConfig     `yaml:"scoring" mapstructure:"scoring"`
	Levels   []LevelConfig     `yaml:"levels" mapstructure:"levels"`
	Failback FailbackConfig    `yaml:"failback" mapstructure:"failback"`
	Services []ServiceConfig   `yaml:"services" mapstructure:"services"`
	Alerts   []AlertRuleConfig `yaml:"alerts" mapstructure:"alerts"`
	// ActuatorNames are the configured actuators' names (ResolvedName),
	// in order: the targets of actuator-scope alert rules. The loader
	// fills it from the file's actuators.
	ActuatorNames []string `yaml:"-" mapstructure:"-"`
}

// GlobalConfig sets the tick.
type GlobalConfig struct {
	// EvaluationInterval is the tick period; ticks are aligned to its multiples.
	EvaluationInterval time.Duration `yaml:"evaluation_interval" mapstructure:"evaluation_interval"`
	// QueryTimeout bounds each PromQL query of a tick; it must be below the interval.
	QueryTimeout time.Duration `yaml:"query_timeout" mapstructure:"query_timeout"`
}

// Missing-data policies of a signal.
const (
	// MissingHold freezes the route's level and raises a blind-spot alert.
	MissingHold = "hold"
	// MissingIgnore treats the signal as optional: no penalty, no alert.
	MissingIgnore = "ignore"
)

// SignalConfig is one per-route signal: a PromQL expression returning at most
// one sample per value of the `route` label.
type SignalConfig struct {
	Name  string `yaml:"name" mapstructure:"name"`
	Query string `yaml:"query" mapstructure:"query"`
	// Missing is what no data means: "hold" (default) or "ignore".
	Missing string `yaml:"missing" mapstructure:"missing"`
	// RequiresTraffic marks signals computed from user traffic: on a route
	// that currently gets no user traffic they are idle, not missing.
	RequiresTraffic bool   `yaml:"requires_traffic" mapstructure:"requires_traffic"`
	Help            string `yaml:"help" mapstructure:"help"`
	// Volume makes the signal a proportion of calls: a PromQL expression,
	// one sample per route, counting the calls behind Query in the same
	// window. The core then acts on a confidence bound of the proportion,
	// not on the ratio alone (see scoring.confidence).
	Volume string `yaml:"volume" mapstructure:"volume"`
	// Samples makes the signal a statistic of samples (a latency quantile
	// against its baseline): a PromQL expression counting the samples
	// behind Query, the fewer of the current and the baseline window. Below
	// scoring.min_samples the signal costs nothing and alerts do not see it.
	Samples string `yaml:"samples" mapstructure:"samples"`
	// Windows are longer windows over which the calls of a signal with a
	// volume are counted too, ascending: each window's query and volume
	// are the signal's own with every range of its own window made that
	// window (WindowQueries), sent in the signal's one TickQuery. The core
	// reads a longer window's evidence only while the next shorter
	// window's ratio agrees with it (docs/detection.md, "Evidence over
	// longer windows").
	Windows []time.Duration `yaml:"windows" mapstructure:"windows"`

	// Derived is what the loader works out of the queries by parsing
	// them as PromQL, which the core does not do; never read from the
	// file.
	Derived DerivedWindows `yaml:"-" mapstructure:"-"`
}

// DerivedWindows are the windows of a signal's queries, worked out by the
// loader (rules/config), which parses PromQL.
type DerivedWindows struct {
	// Own is the window the signal's volume counts over (the 1m of
	// increase(x[1m]), or of a recording named …:rate1m), 0 without a
	// volume.
	Own time.Duration
	// Evidence is the range of the first range selector of the
	// signal's EvidenceQuery (the "2m" explanations name: "2 calls in
	// 2m"), 0 when it has none.
	Evidence time.Duration
	// Over are the signal's query and volume over each of its Windows,
	// in order: its own with every range of its own window made that
	// window.
	Over []WindowQuery
	// Tick is the signal's TickQuery, joined once per load so that a tick
	// only reads it; "" until the loader derives it.
	Tick string
}

// WindowQuery are a signal's query and volume over one longer window.
type WindowQuery struct {
	Query, Volume string
}

// EvidenceQuery is the signal's volume or samples query, "" when it has none.
func (s SignalConfig) EvidenceQuery() string {
	if s.Volume != "" {
		return s.Volume
	}
	return s.Samples
}

// Queries are every PromQL query a tick runs: each signal's TickQuery (its
// query with its evidence), in signal order, each once. Live ticks and
// backtests send exactly these.
func (c *Policy) Queries() []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range c.Signals {
		if q := s.TickQuery(); q != "" && !seen[q] {
			seen[q] = true
			out = append(out, q)
		}
	}
	return out
}

// ScoringConfig turns signal values into a 0..100 health score.
type ScoringConfig struct {
	// Penalties subtract points per unit beyond a threshold, up to a cap.
	Penalties []PenaltyConfig `yaml:"penalties" mapstructure:"penalties"`
	// Caps bound the score whatever the other signals say (vetoes).
	Caps []CapConfig `yaml:"caps" mapstructure:"caps"`
	// Floors force a route to at least a given level (quota overrides).
	Floors []FloorConfig `yaml:"floors" mapstructure:"floors"`
	// Confidence is how sure the calls behind a signal with a volume must
	// make Hermes before a route moves: down only when the one-sided bound
	// at Confidence is past a threshold, up only when it is within.
	// Default config.DefaultConfidence.
	Confidence float64 `yaml:"confidence" mapstructure:"confidence"`
	// DecisiveConfidence is the stricter confidence at which the calls
	// alone skip the dwell: a level whose threshold the score is below even
	// at this confidence is entered on the tick that shows it. Default
	// config.DefaultDecisiveConfidence.
	DecisiveConfidence float64 `yaml:"decisive_confidence" mapstructure:"decisive_confidence"`
	// RecoveryConfidence is the power with which the calls and probe
	// results behind a signal with a volume must rule out a failure
	// before a route moves up (a level up, a failback's start or next
	// stage): the far end of their one-sided bound at RecoveryConfidence
	// must be within every threshold, so a route still failing at a share
	// that would keep it at its level moves up with a chance of at most
	// 1 - RecoveryConfidence at each decision (docs/detection.md, "Moving
	// up"). 0, the default, takes Confidence.
	RecoveryConfidence float64 `yaml:"recovery_confidence" mapstructure:"recovery_confidence"`
	// MinSamples is the fewest samples (see SignalConfig.Samples) a
	// statistic needs to count. Default config.DefaultMinSamples.
	MinSamples float64 `yaml:"min_samples" mapstructure:"min_samples"`
}

// Bound is a one-sided threshold: exactly one of Above and Below is set.
type Bound struct {
	Above *float64 `yaml:"above" mapstructure:"above"`
	Below *float64 `yaml:"below" mapstructure:"below"`
}

// PenaltyConfig subtracts PointsPerUnit × (distance beyond the threshold) points, at most Max.
type PenaltyConfig struct {
	Signal        string `yaml:"signal" mapstructure:"signal"`
	Bound         `yaml:",inline" mapstructure:",squash"`
	PointsPerUnit float64 `yaml:"points_per_unit" mapstructure:"points_per_unit"`
	Max           float64 `yaml:"max" mapstructure:"max"`
}

// CapConfig bounds the score to MaxScore while the signal is beyond the threshold.
type CapConfig struct {
	Signal   string `yaml:"signal" mapstructure:"signal"`
	Bound    `yaml:",inline" mapstructure:",squash"`
	MaxScore float64 `yaml:"max_score" mapstructure:"max_score"`
	// Immediate skips the dwell time when the cap drives a down-move.
	Immediate bool `yaml:"immediate" mapstructure:"immediate"`
}

// FloorConfig forces the route to at least Level while the signal is beyond the threshold.
type FloorConfig struct {
	Signal    string `yaml:"signal" mapstructure:"signal"`
	Bound     `yaml:",inline" mapstructure:",squash"`
	Level     string `yaml:"level" mapstructure:"level"`
	Immediate bool   `yaml:"immediate" mapstructure:"immediate"`
}

// LevelConfig is one degraded level, ordered from mildest (warm) to failover.
type LevelConfig struct {
	Name string `yaml:"name" mapstructure:"name"`
	// Below: a score under it (for Dwell) moves the route down into this level.
	Below float64 `yaml:"below" mapstructure:"below"`
	// RecoverAbove: a score at or above it (for RecoverFor) lets the route leave
	// this level upward (hysteresis). For failover it starts the staged failback.
	RecoverAbove float64       `yaml:"recover_above" mapstructure:"recover_above"`
	Dwell        time.Duration `yaml:"dwell" mapstructure:"dwell"`
	RecoverFor   time.Duration `yaml:"recover_for" mapstructure:"recover_for"`
	// Cooldown is the least time spent in this level before any up-move.
	Cooldown time.Duration `yaml:"cooldown" mapstructure:"cooldown"`
	// PrimaryPercent is the share of its service's traffic the route keeps.
	PrimaryPercent int `yaml:"primary_percent" mapstructure:"primary_percent"`
	// Retries says whether the gateway may retry against the route.
	Retries bool `yaml:"retries" mapstructure:"retries"`
}

// FailbackConfig is the staged return of a failed-over route.
type FailbackConfig struct {
	Stages   []int         `yaml:"stages" mapstructure:"stages"`
	Observe  time.Duration `yaml:"observe" mapstructure:"observe"`
	MinScore float64       `yaml:"min_score" mapstructure:"min_score"`
	// MaxCompleted failbacks per Window; further failbacks wait.
	MaxCompleted int           `yaml:"max_completed" mapstructure:"max_completed"`
	Window       time.Duration `yaml:"window" mapstructure:"window"`
	// ManualAfter: a route still failing this long after its failover goes to manual.
	ManualAfter time.Duration `yaml:"manual_after" mapstructure:"manual_after"`
}

// ServiceConfig is a service and its route priority chain (primary first).
type ServiceConfig struct {
	Name   string   `yaml:"name" mapstructure:"name"`
	Routes []string `yaml:"routes" mapstructure:"routes"`
	// MaxShiftPerTick is the most traffic the plan moves off healthy
	// routes per tick, in percentage points (0: no bound): the smallest
	// max_shift_per_tick of the actuators that write the service, filled
	// in by the loader (rules/config) from the actuators section.
	MaxShiftPerTick int `yaml:"-" mapstructure:"-"`
}

// Alert scopes.
const (
	ScopeRoute   = "route"   // one alert per route
	ScopeService = "service" // one alert per service
	// ScopeActuator: one alert per actuator, from the actuators' health
	// that the live loop passes to the core with each tick's snapshot.
	ScopeActuator = "actuator"
)

// Alert tiers.
const (
	TierA = "A" // page
	TierB = "B" // ticket
	TierC = "C" // info
)

// AlertRuleConfig is one alert over a route's (or service's) evaluation.
type AlertRuleConfig struct {
	Name string `yaml:"name" mapstructure:"name"`
	Tier string `yaml:"tier" mapstructure:"tier"`
	// Scope is "route" (default), "service" or "actuator".
	Scope string `yaml:"scope" mapstructure:"scope"`
	// Expr is a boolean condition in expr-lang's language, of the part
	// Expr (the tree) holds; docs/configuration.md ("Alert variables")
	// lists its variables.
	Expr          string            `yaml:"expr" mapstructure:"expr"`
	For           time.Duration     `yaml:"for" mapstructure:"for"`
	KeepFiringFor time.Duration     `yaml:"keep_firing_for" mapstructure:"keep_firing_for"`
	Labels        map[string]string `yaml:"labels" mapstructure:"labels"`
	Summary       string            `yaml:"summary" mapstructure:"summary"`
	Description   string            `yaml:"description" mapstructure:"description"`
	RunbookURL    string            `yaml:"runbook_url" mapstructure:"runbook_url"`

	// Cond is Expr as the core evaluates it, Summary and Description
	// as the alerting stage renders them (Annotations; nil for an empty
	// template): the loader (rules/config, Config.Rules) makes them from
	// the texts above.
	Cond            *Expr     `yaml:"-" mapstructure:"-"`
	SummaryText     AlertText `yaml:"-" mapstructure:"-"`
	DescriptionText AlertText `yaml:"-" mapstructure:"-"`
}
