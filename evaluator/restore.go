package evaluator

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"
)

// Names of the series that carry the State between restarts. Package
// telemetry exports them and Restore reads them back; timestamps are Unix
// seconds, 0 meaning "none".
const (
	MetricRouteLevel             = "hermes_route_level"
	MetricRouteLevelSince        = "hermes_route_level_since_timestamp_seconds"
	MetricFailbackStage          = "hermes_failback_stage"
	MetricFailbackStageSince     = "hermes_failback_stage_since_timestamp_seconds"
	MetricRouteFailingSince      = "hermes_route_failing_since_timestamp_seconds"
	MetricRouteFailbacksInWindow = "hermes_route_failbacks_in_window"
	MetricRouteLastFailback      = "hermes_route_last_failback_timestamp_seconds"
	MetricRouteReleased          = "hermes_route_released"
	MetricRouteTrafficPercent    = "hermes_route_traffic_percent"
	MetricServiceDegraded        = "hermes_service_degraded"
	MetricServiceRetriesEnabled  = "hermes_service_retries_enabled"
)

// ServiceLabel is the label that names a service in Hermes's own series.
const ServiceLabel = "service"

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

// restoreQuery returns `max by (by) (last_over_time(name{selector}[tolerance]))`.
// The max merges the replicas of an HA pair.
func (o RestoreOptions) restoreQuery(name string, by ...string) string {
	tol := o.Tolerance
	if tol <= 0 {
		tol = DefaultRestoreTolerance
	}
	sel := strings.TrimSpace(o.Selector)
	sel = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(sel, "{"), "}"))
	if sel != "" {
		sel = "{" + sel + "}"
	}
	return fmt.Sprintf("max by (%s) (last_over_time(%s%s[%s]))", strings.Join(by, ", "), name, sel, model.Duration(tol))
}

// Restore rebuilds State from Hermes's own series, read through query at
// now. It returns the state, a human-readable report line per route, and an
// error only when Prometheus could not be asked (then the caller falls back
// to the actuators' current state, see FromActuators).
//
// Every series is read as its last sample within opt.Tolerance before now,
// the maximum over replicas: with an HA pair that disagrees the more severe
// level wins, and each timestamp is the later one (dwell and cooldown count
// from the later start). As with ALERTS_FOR_STATE in Prometheus, a series'
// value is the Unix time its state began.
//
// A configured route with a hermes_route_level series gets Level, Since,
// Stage, StageSince, FailingSince, Failbacks and Released; routes without
// one are absent from State.Routes and the caller decides (Step starts them
// normal). A level that is not an integer in 0..4 drops the route. Any other
// bad value is skipped for a conservative one and reported: a since in the
// future or missing becomes now (dwell and cooldown start again), a stage
// outside 0..len(failback.stages), or set on a route that is not failed
// over, becomes 0. The failback count is restored as that many copies of
// the last failback's time, so the failback budget stays spent at least as
// long as it was. Scores, the per-level dwell timers (BelowSince,
// RecoverSince) and alerts are not restored: they start again.
//
// Services whose routes have hermes_route_traffic_percent series get their
// weights (and degraded and retries flags) back, so the first tick knows
// which routes had traffic.
func Restore(ctx context.Context, query QueryFunc, p *Policy, now time.Time, opt RestoreOptions) (State, []string, error) {
	tol := opt.Tolerance
	if tol <= 0 {
		tol = DefaultRestoreTolerance
	}
	perRoute := []string{
		MetricRouteLevel, MetricRouteLevelSince, MetricFailbackStage, MetricFailbackStageSince,
		MetricRouteFailingSince, MetricRouteFailbacksInWindow, MetricRouteLastFailback, MetricRouteReleased,
	}
	byRoute := map[string]map[string]float64{} // metric → route → value
	for _, name := range perRoute {
		vals, err := queryBy(ctx, query, opt.restoreQuery(name, RouteLabel), now, RouteLabel)
		if err != nil {
			return State{}, nil, err
		}
		byRoute[name] = vals
	}
	traffic, err := queryBy(ctx, query, opt.restoreQuery(MetricRouteTrafficPercent, ServiceLabel, RouteLabel), now, ServiceLabel, RouteLabel)
	if err != nil {
		return State{}, nil, err
	}
	byService := map[string]map[string]float64{}
	for _, name := range []string{MetricServiceDegraded, MetricServiceRetriesEnabled} {
		vals, err := queryBy(ctx, query, opt.restoreQuery(name, ServiceLabel), now, ServiceLabel)
		if err != nil {
			return State{}, nil, err
		}
		byService[name] = vals
	}

	s := State{Routes: map[string]*RouteState{}, Services: map[string]*ServiceState{}}
	var report []string
	for _, route := range p.Routes() {
		rs, line := restoreRoute(p, route, byRoute, now, tol)
		if rs != nil {
			s.Routes[route] = rs
		}
		report = append(report, line)
	}
	configured := map[string]bool{}
	for _, r := range p.Routes() {
		configured[r] = true
	}
	for _, r := range slices.Sorted(maps.Keys(byRoute[MetricRouteLevel])) {
		if !configured[r] {
			report = append(report, fmt.Sprintf("%s: has state in Prometheus but is not configured; ignored", r))
		}
	}

	for _, svc := range p.Config.Services {
		st := ServiceState{Weights: make(map[string]int, len(svc.Routes))}
		found := false
		var notes []string
		for _, r := range svc.Routes {
			v, ok := traffic[svc.Name+"\xff"+r]
			switch {
			case !ok:
				st.Weights[r] = 0
			case math.IsNaN(v) || v < 0 || v > 100:
				st.Weights[r] = 0
				notes = append(notes, fmt.Sprintf("bad traffic percent %g for %s taken as 0", v, r))
				found = true
			default:
				st.Weights[r] = int(math.Round(v))
				found = true
			}
		}
		if !found {
			continue
		}
		st.Degraded = byService[MetricServiceDegraded][svc.Name] > 0
		st.RetriesEnabled = byService[MetricServiceRetriesEnabled][svc.Name] > 0
		s.Services[svc.Name] = &st
		report = append(report, serviceLine(svc.Name, svc.Routes, st.Weights, notes))
	}
	return s, report, nil
}

// queryBy runs q at now and indexes its samples by the values of labels,
// joined by "\xff". Samples lacking a label are ignored; of several samples
// with one key the highest wins.
func queryBy(ctx context.Context, query QueryFunc, q string, now time.Time, labels ...string) (map[string]float64, error) {
	vec, err := query(ctx, q, now)
	if err != nil {
		return nil, fmt.Errorf("restoring state: query %s: %w", q, err)
	}
	out := make(map[string]float64, len(vec))
	for _, smp := range vec {
		parts := make([]string, 0, len(labels))
		for _, l := range labels {
			v, ok := smp.Metric[model.LabelName(l)]
			if !ok {
				break
			}
			parts = append(parts, string(v))
		}
		if len(parts) != len(labels) {
			continue
		}
		k, v := strings.Join(parts, "\xff"), float64(smp.Value)
		if old, ok := out[k]; !ok || v > old || math.IsNaN(old) {
			out[k] = v
		}
	}
	return out, nil
}

// restoreRoute rebuilds one route from the per-route series. It returns nil
// when the route has no usable level, and the route's report line.
func restoreRoute(p *Policy, route string, vals map[string]map[string]float64, now time.Time, tol time.Duration) (*RouteState, string) {
	lv, ok := vals[MetricRouteLevel][route]
	switch {
	case !ok:
		return nil, fmt.Sprintf("%s: no state in Prometheus within %s; not restored", route, model.Duration(tol))
	case !isInt(lv) || lv < float64(Normal) || lv > float64(Manual):
		return nil, fmt.Sprintf("%s: bad level %g (want 0..4); not restored", route, lv)
	}
	rs := &RouteState{Level: Level(lv)}
	var notes []string
	// since reads a timestamp series; required ones default to now.
	since := func(name, what string, required bool) time.Time {
		v, ok := vals[name][route]
		switch {
		case !ok || math.IsNaN(v) || v <= 0:
			if required {
				notes = append(notes, what+" unknown, taken as now")
				return now
			}
			return time.Time{}
		case math.IsInf(v, 0):
			notes = append(notes, fmt.Sprintf("bad %s %g, taken as now", what, v))
			return now
		}
		t := time.UnixMilli(int64(math.Round(v * 1000))).UTC()
		if t.After(now) {
			notes = append(notes, fmt.Sprintf("%s %s is in the future, taken as now", what, fmtTime(t)))
			return now
		}
		return t
	}
	rs.Since = since(MetricRouteLevelSince, "since", true)

	if st, ok := vals[MetricFailbackStage][route]; ok && st != 0 {
		switch {
		case !isInt(st) || st < 0 || st > float64(len(p.Config.Failback.Stages)):
			notes = append(notes, fmt.Sprintf("bad failback stage %g (want 0..%d), taken as 0", st, len(p.Config.Failback.Stages)))
		case rs.Level != Failover:
			notes = append(notes, fmt.Sprintf("failback stage %g ignored at level %s", st, rs.Level))
		default:
			rs.Stage = int(st)
			rs.StageSince = since(MetricFailbackStageSince, "stage since", true)
		}
	}
	rs.FailingSince = since(MetricRouteFailingSince, "failing since", false)

	if n, ok := vals[MetricRouteFailbacksInWindow][route]; ok && n != 0 {
		if !isInt(n) || n < 0 || n > 1000 {
			notes = append(notes, fmt.Sprintf("bad failback count %g ignored", n))
		} else {
			last := since(MetricRouteLastFailback, "last failback", true)
			if now.Sub(last) < p.Config.Failback.Window {
				for range int(n) {
					rs.Failbacks = append(rs.Failbacks, last)
				}
			}
		}
	}
	rs.Released = vals[MetricRouteReleased][route] > 0

	var b strings.Builder
	fmt.Fprintf(&b, "%s: restored %s", route, rs.Level)
	if rs.Stage > 0 {
		fmt.Fprintf(&b, " at failback stage %d (%d%%) since %s", rs.Stage, p.Config.Failback.Stages[rs.Stage-1], fmtTime(rs.StageSince))
	}
	fmt.Fprintf(&b, ", level since %s", fmtTime(rs.Since))
	if !rs.FailingSince.IsZero() {
		fmt.Fprintf(&b, ", failing since %s", fmtTime(rs.FailingSince))
	}
	if n := len(rs.Failbacks); n > 0 {
		fmt.Fprintf(&b, ", %d failback(s) in the window, the last at %s", n, fmtTime(rs.Failbacks[n-1]))
	}
	if rs.Released {
		b.WriteString(", released from manual")
	}
	if len(notes) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(notes, "; "))
	}
	return rs, b.String()
}

// FromActuators infers State from the split the actuators hold now, given as
// service → route → percent, for when Prometheus has nothing to restore. It
// returns the state and a report line per route.
//
// The primary (first route of a service's chain) is read from its own share:
// 100 is normal; the primary_percent of warm or shed is that level (levels
// win over failback stages when their percentages coincide); 0 is failover;
// a failback.stages percentage is failover at that stage. Any other share is
// the least severe level that keeps no more than it. A later route is
// normal, unless it holds 0 % while a route after it in the chain has
// traffic: then the chain skipped it, and it is failed over. A route in
// several services takes its most severe reading. Every Since is now, so
// dwell, cooldown, failback observation and manual_after all start again;
// no failback is assumed spent. Routes of services the actuators report
// nothing for are absent from State.Routes.
func FromActuators(p *Policy, current map[string]map[string]int, now time.Time) (State, []string) {
	s := State{Routes: map[string]*RouteState{}, Services: map[string]*ServiceState{}}
	why := map[string]string{}
	var report []string
	for _, svc := range p.Config.Services {
		w, ok := current[svc.Name]
		if !ok {
			continue
		}
		for i, r := range svc.Routes {
			var rs RouteState
			var reason string
			if i == 0 {
				rs, reason = inferPrimary(p, w[r])
			} else {
				rs, reason = RouteState{Level: Normal}, fmt.Sprintf("holds %d%%", w[r])
				if w[r] == 0 && slices.ContainsFunc(svc.Routes[i+1:], func(n string) bool { return w[n] > 0 }) {
					rs, reason = RouteState{Level: Failover}, "holds 0% while a later route has traffic"
				}
			}
			reason = fmt.Sprintf("%s in %s", reason, svc.Name)
			old := s.Routes[r]
			if old != nil && !moreSevere(p, rs, *old) {
				continue
			}
			rs.Since = now
			if rs.Level == Failover {
				if rs.Stage > 0 {
					rs.StageSince = now
				} else {
					rs.FailingSince = now
				}
			}
			s.Routes[r] = &rs
			why[r] = reason
		}
	}
	for _, svc := range p.Config.Services {
		w, ok := current[svc.Name]
		if !ok {
			continue
		}
		st := PlanService(p, svc, s.Routes)
		for _, r := range svc.Routes {
			st.Weights[r] = w[r]
		}
		s.Services[svc.Name] = &st
	}
	for _, r := range p.Routes() {
		rs, ok := s.Routes[r]
		if !ok {
			report = append(report, fmt.Sprintf("%s: no split known from the actuators; not restored", r))
			continue
		}
		line := fmt.Sprintf("%s: inferred %s", r, rs.Level)
		if rs.Stage > 0 {
			line += fmt.Sprintf(" at failback stage %d", rs.Stage)
		}
		report = append(report, fmt.Sprintf("%s from the actuators (%s), since now", line, why[r]))
	}
	return s, report
}

// inferPrimary reads a primary route's level from the share it holds.
func inferPrimary(p *Policy, pct int) (RouteState, string) {
	held := fmt.Sprintf("primary holds %d%%", pct)
	switch {
	case pct >= 100:
		return RouteState{Level: Normal}, held
	case pct <= 0:
		return RouteState{Level: Failover}, held
	}
	for _, l := range []Level{Warm, Shed} {
		if p.level(l).PrimaryPercent == pct {
			return RouteState{Level: l}, held
		}
	}
	if i := slices.Index(p.Config.Failback.Stages, pct); i >= 0 {
		return RouteState{Level: Failover, Stage: i + 1}, held
	}
	for _, l := range []Level{Warm, Shed, Failover} {
		if p.level(l).PrimaryPercent <= pct {
			return RouteState{Level: l}, held + ", not a configured share"
		}
	}
	return RouteState{Level: Failover}, held + ", not a configured share"
}

// moreSevere reports whether a sends less traffic to its route than b (on
// a tie, whether its level is higher).
func moreSevere(p *Policy, a, b RouteState) bool {
	pa, pb := p.primaryPercent(a), p.primaryPercent(b)
	if pa != pb {
		return pa < pb
	}
	return a.Level > b.Level
}

func serviceLine(name string, chain []string, w map[string]int, notes []string) string {
	parts := make([]string, len(chain))
	for i, r := range chain {
		parts[i] = fmt.Sprintf("%s=%d%%", r, w[r])
	}
	line := fmt.Sprintf("service %s: restored split %s", name, strings.Join(parts, " "))
	if len(notes) > 0 {
		line += " (" + strings.Join(notes, "; ") + ")"
	}
	return line
}

func isInt(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && v == math.Trunc(v) }

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }
