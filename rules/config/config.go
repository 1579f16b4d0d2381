// Package config loads Hermes's configuration file: it parses the file
// once into yaml nodes (tree.go), applies the environment (HERMES_…) by
// viper's rules, decodes strictly with mapstructure, validates
// with every problem's file:line, and builds the policy the core reads
// (rules.Policy), with what it derives from parsing the signals' PromQL.
// The rest of the file (where Prometheus and Alertmanager are, the
// actuators) is the shell's and stays here.
package config

import (
	"slices"
	"time"

	commoncfg "github.com/prometheus/common/config"

	"github.com/hermes-failover/hermes/rules"
)

// Config is the whole Hermes configuration file: the policy the core reads
// (rules.Policy, whose keys are at the top level of the file) and the
// shell's sections.
type Config struct {
	rules.Policy `yaml:",inline" mapstructure:",squash"`
	Prometheus   PrometheusConfig `yaml:"prometheus" mapstructure:"prometheus"`
	Actuators    []ActuatorConfig `yaml:"actuators" mapstructure:"actuators"`
	Alerting     AlertingConfig   `yaml:"alerting" mapstructure:"alerting"`

	// src is where Parse read the configuration (see Locate).
	src *configSource
}

// Rules is the policy of c for the core (evaluator.NewPolicy), prepared
// from c as it is now: its actuators' names and what the signals' PromQL
// says of their windows (rules.DerivedWindows) are worked out afresh, and
// its alert rules' conditions and templates compiled (compileAlertRule), so a
// Config changed after Parse (tests do) gives the policy it reads as.
// c itself is not changed.
func (c *Config) Rules() *rules.Policy {
	p := c.Policy
	p.Signals = DeriveSignals(c.Signals)
	p.ActuatorNames = make([]string, len(c.Actuators))
	for i, a := range c.Actuators {
		p.ActuatorNames[i] = a.ResolvedName()
	}
	p.Services = slices.Clone(c.Services)
	for i := range p.Services {
		p.Services[i].MaxShiftPerTick = shiftLimit(c.Actuators, p.Services[i].Name)
	}
	p.Alerts = slices.Clone(c.Alerts)
	for i := range p.Alerts {
		compileAlertRule(&p.Alerts[i])
	}
	return &p
}

// shiftLimit is the max_shift_per_tick of service: the smallest limit of
// the actuators that write it (those naming it in `services:`, or naming
// none), 0 when none limits it. A limit of 100 or more moves everything
// in one tick, so it is no limit.
func shiftLimit(acts []ActuatorConfig, service string) int {
	out := 0
	for _, a := range acts {
		n := a.MaxShiftPerTick
		if n <= 0 || n >= 100 || len(a.Services) > 0 && !slices.Contains(a.Services, service) {
			continue
		}
		if out == 0 || n < out {
			out = n
		}
	}
	return out
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
