package persist

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/promapi"
)

// optionalRouteSeries are the per-route saved-state series that exist only
// while their fact differs from its default (no failback stage, not
// failing, no failback in the window, not released): Exporter deletes them
// otherwise, so a calm route costs only its level and level-since series.
// Restore reads them through current, where "absent" means "default".
var optionalRouteSeries = []string{
	MetricFailbackStage, MetricFailbackStageSince, MetricRouteFailingSince,
	MetricRouteFailbacksInWindow, MetricRouteLastFailback, MetricRouteReleased,
}

// current reads the series that exist only while their state holds (the
// optional saved-state series, the degraded flag, active alerts): a value
// counts only if its series was still scraped at Hermes's last export,
// found as the last scrape of any hermes_route_level series (present for
// every configured route). last_over_time alone would return the last
// value before a series ended, when the state had already gone back to its
// default; a series that ended therefore means "default", while a
// Prometheus without Hermes's series at all makes Restore fall back to the
// actuators (Load), since the level series are missing too.
type current struct {
	query promapi.QueryFunc
	opt   RestoreOptions
	step  time.Duration
	now   time.Time
	// after is the Unix time a series must have been scraped at or after to
	// count: the last export less freshness(step).
	after float64
}

// newCurrent asks when Hermes last exported its route levels.
func newCurrent(ctx context.Context, query promapi.QueryFunc, p *evaluator.Policy, now time.Time, opt RestoreOptions) (*current, error) {
	c := &current{query: query, opt: opt, step: p.Config.Global.EvaluationInterval, now: now}
	exported, err := c.run(ctx, opt.lastSeenQuery(c.step, MetricRouteLevel))
	if err != nil {
		return nil, err
	}
	lastExport := 0.0 // the query has one series, without labels
	for _, at := range exported {
		lastExport = max(lastExport, at)
	}
	c.after = lastExport - freshness(c.step).Seconds()
	return c, nil
}

// get returns the last value within the tolerance of each series of name
// still scraped at the last export, by the values of the by labels joined
// with "\xff" (a missing label counts as empty); of several series with
// one key the highest wins.
func (c *current) get(ctx context.Context, name string, by ...string) (map[string]float64, error) {
	vals, err := c.run(ctx, c.opt.query(name, by...), by...)
	if err != nil {
		return nil, err
	}
	seen, err := c.run(ctx, c.opt.lastSeenQuery(c.step, name, by...), by...)
	if err != nil {
		return nil, err
	}
	for k := range vals {
		if at, ok := seen[k]; !ok || at < c.after {
			delete(vals, k) // ended before the last export: back at its default
		}
	}
	return vals, nil
}

// run runs q at c.now and indexes its samples by the values of by.
func (c *current) run(ctx context.Context, q string, by ...string) (map[string]float64, error) {
	vec, err := c.query(ctx, q, c.now)
	if err != nil {
		return nil, fmt.Errorf("query %s: %w", q, err)
	}
	out := make(map[string]float64, len(vec))
	for _, smp := range vec {
		k, v := labelKey(smp.Metric, by), float64(smp.Value)
		if old, ok := out[k]; !ok || v > old || math.IsNaN(old) {
			out[k] = v
		}
	}
	return out, nil
}

// freshness is how long before Hermes's last export a series may have been
// last scraped and still count as present then: two evaluation intervals,
// plus as much again for the scrape and the subquery's resolution.
func freshness(interval time.Duration) time.Duration { return 4 * interval }

// labelKey joins the values of labels in m with "\xff".
func labelKey(m model.Metric, labels []string) string {
	vals := make([]string, len(labels))
	for i, l := range labels {
		vals[i] = string(m[model.LabelName(l)])
	}
	return strings.Join(vals, "\xff")
}
