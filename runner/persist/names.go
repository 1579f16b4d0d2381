package persist

import (
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/labelname"
)

// Names of the series that carry the state between restarts. Timestamps
// are Unix seconds. Every configured route always has a level, a level
// since and a traffic percent per service, and every service its retries
// flag; the other series exist only while they differ from their default
// (0, "none" or false), so a calm fleet costs few series (docs/design.md).
const (
	MetricRouteLevel             = "hermes_route_level"
	MetricRouteLevelSince        = "hermes_route_level_since_timestamp_seconds"
	MetricFailbackStage          = "hermes_failback_stage"
	MetricFailbackStageSince     = "hermes_failback_stage_since_timestamp_seconds"
	MetricRouteFailingSince      = "hermes_route_failing_since_timestamp_seconds"
	MetricRouteFailbacksInWindow = "hermes_route_failbacks_in_window"
	MetricRouteLastFailback      = "hermes_route_last_failback_timestamp_seconds"
	MetricRouteReleased          = "hermes_route_released"
	MetricRouteTrafficRatio      = "hermes_route_traffic_ratio"
	MetricServiceDegraded        = "hermes_service_degraded"
	MetricServiceRetriesEnabled  = "hermes_service_retries_enabled"
	// MetricAlertActiveSince carries each pending or firing alert, labelled
	// with evaluator.ForStateLabels; its value is the Unix time the alert
	// became active.
	MetricAlertActiveSince = "hermes_alert_active_since_timestamp_seconds"
)

// Names of the series before ratios were 0–1 (CHANGELOG.md). Restore and
// the charts still read them where the new series have no data, so that
// an upgrade in the middle of an incident restores the split.
const (
	LegacyRouteTrafficPercent    = "hermes_route_traffic_percent"
	LegacyActuatorTrafficPercent = "hermes_actuator_traffic_percent"
)

// Labels that name a route and a service in Hermes's own series.
const (
	RouteLabel   = labelname.Route
	ServiceLabel = labelname.Service
)

// DefaultRestoreTolerance is how old Hermes's own series may be when
// RestoreOptions.Tolerance is not set.
const DefaultRestoreTolerance = time.Hour

// RestoreOptions say where Hermes's own series are and how old they may be.
type RestoreOptions struct {
	// Tolerance is how far back a series' last sample may lie; older state
	// is not restored. Default DefaultRestoreTolerance.
	Tolerance time.Duration
	// Selector holds extra label matchers put inside {}, e.g. `job="hermes"`;
	// it may be empty.
	Selector string
}

func (o RestoreOptions) tolerance() time.Duration {
	if o.Tolerance <= 0 {
		return DefaultRestoreTolerance
	}
	return o.Tolerance
}

// query returns `max by (by) (last_over_time(name{selector}[tolerance]))`.
// The max merges the replicas of an HA pair.
func (o RestoreOptions) query(name string, by ...string) string {
	return fmt.Sprintf("max by (%s) (last_over_time(%s%s[%s]))", strings.Join(by, ", "), name, o.selector(), model.Duration(o.tolerance()))
}

// ratioQuery returns `max by (by) (F(ratio{selector}))`, or where it has
// no series `max by (by) (F(legacy{selector})) / 100`: a 0–1 ratio read
// from the series or from its 0–100 predecessor. f wraps the selector
// (a range function, or nothing when it is "%s").
func (o RestoreOptions) ratioQuery(f, ratio, legacy string, by ...string) string {
	b := strings.Join(by, ", ")
	return fmt.Sprintf("max by (%s) (%s) or max by (%s) (%s) / 100", b, fmt.Sprintf(f, ratio+o.selector()), b, fmt.Sprintf(f, legacy+o.selector()))
}

// selector is Selector as "{…}", or "" when it is empty.
func (o RestoreOptions) selector() string {
	sel := strings.TrimSpace(o.Selector)
	sel = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(sel, "{"), "}"))
	if sel != "" {
		sel = "{" + sel + "}"
	}
	return sel
}

// lastSeenQuery returns
// `max by (by) (max_over_time(timestamp(name{selector})[tolerance:step]))`:
// when each series was last scraped within the tolerance. A series that
// ended (a staleness marker) is not seen after its end, unlike with
// last_over_time.
func (o RestoreOptions) lastSeenQuery(step time.Duration, name string, by ...string) string {
	return fmt.Sprintf("max by (%s) (max_over_time(timestamp(%s%s)[%s:%s]))", strings.Join(by, ", "), name, o.selector(),
		model.Duration(o.tolerance()), model.Duration(step))
}
