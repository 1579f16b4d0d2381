// Package rules holds Hermes's configuration: its schema, loading, validation
// and the shipped default policy (hermes.yaml).
package rules

import (
	"time"

	commoncfg "github.com/prometheus/common/config"
)

// Config is the whole Hermes configuration file.
type Config struct {
	Global     GlobalConfig      `yaml:"global" mapstructure:"global"`
	Prometheus PrometheusConfig  `yaml:"prometheus" mapstructure:"prometheus"`
	Signals    []SignalConfig    `yaml:"signals" mapstructure:"signals"`
	Scoring    ScoringConfig     `yaml:"scoring" mapstructure:"scoring"`
	Levels     []LevelConfig     `yaml:"levels" mapstructure:"levels"`
	Failback   FailbackConfig    `yaml:"failback" mapstructure:"failback"`
	Services   []ServiceConfig   `yaml:"services" mapstructure:"services"`
	Alerts     []AlertRuleConfig `yaml:"alerts" mapstructure:"alerts"`
	Actuators  []ActuatorConfig  `yaml:"actuators" mapstructure:"actuators"`
	Alerting   AlertingConfig    `yaml:"alerting" mapstructure:"alerting"`

	// src is where Parse read the configuration (see Locate).
	src *configSource
}

// GlobalConfig sets the tick.
type GlobalConfig struct {
	// EvaluationInterval is the tick period; ticks are aligned to its multiples.
	EvaluationInterval time.Duration `yaml:"evaluation_interval" mapstructure:"evaluation_interval"`
	// QueryTimeout bounds each PromQL query of a tick; it must be below the interval.
	QueryTimeout time.Duration `yaml:"query_timeout" mapstructure:"query_timeout"`
}

// PrometheusConfig says where signals are queried.
type PrometheusConfig struct {
	URL string `yaml:"url" mapstructure:"url"`
	// HTTPClient is the prometheus/common HTTP client configuration
	// (basic_auth, authorization, tls_config, proxy_url, ...).
	HTTPClient commoncfg.HTTPClientConfig `yaml:"http_config" mapstructure:"http_config"`
	// MaxResponseBytes bounds the body of one query answer; a larger one
	// fails that signal ("response_too_large") instead of filling Hermes's
	// memory. 0 means no bound. Default DefaultMaxResponseBytes.
	MaxResponseBytes int64 `yaml:"max_response_bytes" mapstructure:"max_response_bytes"`
	// MaxSeriesPerQuery bounds the series one signal's answer may hold; more
	// fail that signal ("too_many_series"). 0 means no bound. Default
	// DefaultMaxSeriesPerQuery.
	MaxSeriesPerQuery int `yaml:"max_series_per_query" mapstructure:"max_series_per_query"`
}

// Defaults of the query answer bounds: a signal over 10,000 routes answers
// about 1 MB and 10,000 series.
const (
	DefaultMaxResponseBytes  = 16 << 20
	DefaultMaxSeriesPerQuery = 100_000
)

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
func (c *Config) Queries() []string {
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
	// Default DefaultConfidence.
	Confidence float64 `yaml:"confidence" mapstructure:"confidence"`
	// DecisiveConfidence is the stricter confidence at which the calls
	// alone skip the dwell: a level whose threshold the score is below even
	// at this confidence is entered on the tick that shows it. Default
	// DefaultDecisiveConfidence.
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
	// statistic needs to count. Default DefaultMinSamples.
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
}

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
	// Expr is an expr-lang boolean condition; docs/configuration.md ("Alert
	// variables") lists its variables.
	Expr          string            `yaml:"expr" mapstructure:"expr"`
	For           time.Duration     `yaml:"for" mapstructure:"for"`
	KeepFiringFor time.Duration     `yaml:"keep_firing_for" mapstructure:"keep_firing_for"`
	Labels        map[string]string `yaml:"labels" mapstructure:"labels"`
	Summary       string            `yaml:"summary" mapstructure:"summary"`
	Description   string            `yaml:"description" mapstructure:"description"`
	RunbookURL    string            `yaml:"runbook_url" mapstructure:"runbook_url"`
}

// AlertingConfig says where alerts are sent and how often.
type AlertingConfig struct {
	// Alertmanagers each receive every alert: list every member of an HA
	// cluster, not a load balancer in front of it. Empty: alerts are
	// evaluated and exported, but not sent.
	Alertmanagers []AlertmanagerConfig `yaml:"alertmanagers" mapstructure:"alertmanagers"`
	// ExternalURL is Hermes's own address as people reach it; alerts link
	// to its status page there (generatorURL). Default DefaultExternalURL.
	ExternalURL string `yaml:"external_url" mapstructure:"external_url"`
	// RunbookBaseURL is where relative runbook_url annotations of alerts
	// ("#hermesroutefailedover", "other.html#x") point: they are resolved
	// against it, as links in a page are. Default DefaultRunbookBaseURL.
	RunbookBaseURL string `yaml:"runbook_base_url" mapstructure:"runbook_base_url"`
	// ResendDelay is the least time between two sends of an unchanged
	// alert; firing alerts are valid for 4 × max(evaluation interval,
	// ResendDelay). Default: global.evaluation_interval.
	ResendDelay time.Duration `yaml:"resend_delay" mapstructure:"resend_delay"`
	// QueueCapacity bounds the alerts waiting for each Alertmanager; on
	// overflow the oldest are dropped. Default DefaultQueueCapacity.
	QueueCapacity int `yaml:"queue_capacity" mapstructure:"queue_capacity"`
}

// AlertmanagerConfig is one Alertmanager; alerts are POSTed to
// URL + "/api/v2/alerts".
type AlertmanagerConfig struct {
	// URL is the Alertmanager's base URL, with its path prefix if any.
	URL string `yaml:"url" mapstructure:"url"`
	// Timeout bounds one request. Default DefaultAlertmanagerTimeout.
	Timeout time.Duration `yaml:"timeout" mapstructure:"timeout"`
	// HTTPClient is the prometheus/common HTTP client configuration, as
	// prometheus.http_config.
	HTTPClient commoncfg.HTTPClientConfig `yaml:"http_config" mapstructure:"http_config"`
}

// ActuatorConfig is one actuator; Type picks the package and Options holds
// the type-specific keys, decoded strictly by that package.
type ActuatorConfig struct {
	Name     string         `yaml:"name" mapstructure:"name"`
	Type     string         `yaml:"type" mapstructure:"type"`
	Services []string       `yaml:"services" mapstructure:"services"`
	Options  map[string]any `yaml:",inline" mapstructure:",remain"`

	// MaxShiftPerTick bounds the traffic the core's plan moves per tick in
	// the actuator's services, in percentage points (1..99; 0 or 100: no
	// bound). The core plans the steps (evaluator's shift.go), so
	// backtests and the status page show them; the actuator writes them.
	MaxShiftPerTick int `yaml:"max_shift_per_tick,omitempty" mapstructure:"max_shift_per_tick"`
}

// ResolvedName is the actuator's name: Name, or Type when Name is unset.
// Logs, metrics, errors and actuator-scope alerts use it.
func (a ActuatorConfig) ResolvedName() string {
	if a.Name != "" {
		return a.Name
	}
	return a.Type
}
