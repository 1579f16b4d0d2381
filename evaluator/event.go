package evaluator

import (
	"time"

	"github.com/hermes-failover/hermes/rules"
)

// Event types.
const (
	EventLevel    = "level"    // a route changed level
	EventFailback = "failback" // a failback stage began, stepped back or completed
	EventTraffic  = "traffic"  // a service's split changed
	EventAlert    = "alert"    // an alert started or stopped firing
	EventOverride = "override" // an operator override was set, cleared or expired
	EventCommand  = "command"  // an operator command was rejected when its tick came
	EventDrill    = "drill"    // a drill started, reached a phase or ended (see Drill)
	// EventAlertError: an alert expression failed at run time (a division
	// by zero, a non-boolean result); the alert counts as not holding. The
	// live loop logs and counts it (hermes_alert_eval_errors_total) rather
	// than auditing it every tick.
	EventAlertError = "alert_error"
)

// Event is one thing the core decided, as printed by backtests and written
// to the audit log. Fields that do not apply to a Type are empty.
type Event struct {
	Time    time.Time `json:"time"`
	Type    string    `json:"type"`
	Service string    `json:"service,omitempty"`
	Route   string    `json:"route,omitempty"`

	// level and failback
	From    string   `json:"from,omitempty"`
	To      string   `json:"to,omitempty"`
	Score   *float64 `json:"score,omitempty"`
	Reasons []string `json:"reasons,omitempty"`
	// failback: the stage entered (0 = none) and the route's share there.
	Stage   *int `json:"stage,omitempty"`
	Percent *int `json:"percent,omitempty"`

	// traffic
	Weights        map[string]int `json:"weights,omitempty"`
	Degraded       *bool          `json:"degraded,omitempty"`
	RetriesEnabled *bool          `json:"retries_enabled,omitempty"`

	// alert
	Name        string            `json:"name,omitempty"`
	Tier        string            `json:"tier,omitempty"`
	State       string            `json:"state,omitempty"`
	Labels      map[string]string `json:"labels,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"`
	ActiveAt    *time.Time        `json:"active_at,omitempty"`
	// Env is what an alert event's annotations render from (Alert.Env);
	// the core leaves them unrendered (Policy.EventText).
	Env *rules.AlertEnv `json:"-"`

	// override and command: who asked, until when, and the request's ID.
	By      string     `json:"by,omitempty"`
	Expires *time.Time `json:"expires,omitempty"`
	Command string     `json:"command,omitempty"`

	// drill: which drill the event belongs to; State is its phase.
	Drill *DrillInfo `json:"drill,omitempty"`
}
