package persist

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/promapi"
	"github.com/hermes-failover/hermes/traffic"
)

// Restore rebuilds State from Hermes's own series, read through query at
// now. It returns the state, a human-readable report line per route, and an
// error only when Prometheus could not be asked (then the caller falls back
// to the actuators' current state, see Load).
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
// normal). Stage, failing-since, failbacks, released and the degraded flag
// have series only while they are not at their default; one that ended
// before Hermes's last export means the default (see current). A level that is not an integer in 0..4 drops the route. Any other
// bad value is skipped for a conservative one and reported: a since in the
// future or missing becomes now (dwell and cooldown start again), a stage
// outside 0..len(failback.stages), or set on a route that is not failed
// over, becomes 0. The failback count is restored as that many copies of
// the last failback's time, so the failback budget stays spent at least as
// long as it was. Scores, the per-level dwell timers (BelowSince,
// RecoverSince) and alerts are not restored: they start again.
//
// Services whose routes have hermes_route_traffic_ratio series (or, from
// before the ratios, hermes_route_traffic_percent) get their
// weights (and degraded and retries flags) back, so the first tick knows
// which routes had traffic.
func Restore(ctx context.Context, query promapi.QueryFunc, p *evaluator.Policy, now time.Time, opt RestoreOptions) (evaluator.State, []string, error) {
	tol := opt.tolerance()
	byRoute := map[string]map[string]float64{} // metric → route → value
	for _, name := range []string{MetricRouteLevel, MetricRouteLevelSince} {
		vals, err := queryBy(ctx, query, opt.query(name, RouteLabel), now, RouteLabel)
		if err != nil {
			return evaluator.State{}, nil, err
		}
		byRoute[name] = vals
	}
	cur, err := newCurrent(ctx, query, p, now, opt)
	if err != nil {
		return evaluator.State{}, nil, fmt.Errorf("restoring state: %w", err)
	}
	for _, name := range optionalRouteSeries {
		vals, err := cur.get(ctx, name, RouteLabel)
		if err != nil {
			return evaluator.State{}, nil, fmt.Errorf("restoring state: %w", err)
		}
		byRoute[name] = vals
	}
	lastOver := "last_over_time(%s[" + model.Duration(tol).String() + "])"
	shares, err := queryBy(ctx, query, opt.ratioQuery(lastOver, MetricRouteTrafficRatio, LegacyRouteTrafficPercent, ServiceLabel, RouteLabel), now, ServiceLabel, RouteLabel)
	if err != nil {
		return evaluator.State{}, nil, err
	}
	byService := map[string]map[string]float64{}
	if byService[MetricServiceDegraded], err = cur.get(ctx, MetricServiceDegraded, ServiceLabel); err != nil {
		return evaluator.State{}, nil, fmt.Errorf("restoring state: %w", err)
	}
	if byService[MetricServiceRetriesEnabled], err = queryBy(ctx, query, opt.query(MetricServiceRetriesEnabled, ServiceLabel), now, ServiceLabel); err != nil {
		return evaluator.State{}, nil, err
	}

	s := evaluator.State{Routes: map[string]*evaluator.RouteState{}, Services: map[string]*traffic.Split{}}
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
		st := traffic.Split{Weights: make(map[string]int, len(svc.Routes))}
		found := false
		var notes []string
		for _, r := range svc.Routes {
			v, ok := shares[svc.Name+"\xff"+r]
			switch {
			case !ok:
				st.Weights[r] = 0
			case math.IsNaN(v) || v < 0 || v > 1:
				st.Weights[r] = 0
				notes = append(notes, fmt.Sprintf("bad traffic ratio %g for %s taken as 0", v, r))
				found = true
			default:
				st.Weights[r] = int(math.Round(v * 100))
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
func queryBy(ctx context.Context, query promapi.QueryFunc, q string, now time.Time, labels ...string) (map[string]float64, error) {
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
func restoreRoute(p *evaluator.Policy, route string, vals map[string]map[string]float64, now time.Time, tol time.Duration) (*evaluator.RouteState, string) {
	lv, ok := vals[MetricRouteLevel][route]
	switch {
	case !ok:
		return nil, fmt.Sprintf("%s: no state in Prometheus within %s; not restored", route, model.Duration(tol))
	}
	level, ok := levelOf(lv)
	if !ok {
		return nil, fmt.Sprintf("%s: bad level %g (want 0..4); not restored", route, lv)
	}
	rs := &evaluator.RouteState{SavedRoute: evaluator.SavedRoute{Level: level}}
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
		case rs.Level != traffic.Failover:
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

// restoreBy are the labels RestoreAlerts groups by: an alert's identity,
// and its level and drill labels (fixed when the alert became active).
var restoreBy = []string{"alertname", ServiceLabel, RouteLabel, ActuatorLabel, "level", "drill"}

// RestoreAlerts rebuilds the pending and firing alerts of State.Alerts from
// MetricAlertActiveSince, read through query at now:
//
//	max by (alertname, service, route, actuator, level, drill) (last_over_time(hermes_alert_active_since_timestamp_seconds{SELECTOR}[TOLERANCE]))
//
// Only alerts that were active at Hermes's last export come back (see
// current): an alert resolved, or pending, minutes before the restart is
// not revived, and one whose condition holds again starts anew rather than
// inheriting its old start.
//
// Of an HA pair the later activation wins, as in Restore. Each alert is
// rebuilt by the policy (evaluator.Policy.RestoreAlert), which skips series
// of unknown rules and targets; values that are not a time are skipped.
func RestoreAlerts(ctx context.Context, query promapi.QueryFunc, p *evaluator.Policy, now time.Time, opt RestoreOptions) (map[string]*evaluator.Alert, error) {
	cur, err := newCurrent(ctx, query, p, now, opt)
	if err != nil {
		return nil, fmt.Errorf("restoring alerts: %w", err)
	}
	active, err := cur.get(ctx, MetricAlertActiveSince, restoreBy...)
	if err != nil {
		return nil, fmt.Errorf("restoring alerts: %w", err)
	}
	out := map[string]*evaluator.Alert{}
	for _, k := range slices.Sorted(maps.Keys(active)) {
		v := active[k]
		if math.IsNaN(v) || math.IsInf(v, 0) || v <= 0 {
			continue
		}
		labels := make(map[string]string, len(restoreBy))
		for i, val := range strings.Split(k, "\xff") {
			labels[restoreBy[i]] = val
		}
		a, ok := p.RestoreAlert(labels, time.UnixMilli(int64(math.Round(v*1000))).UTC(), now)
		if !ok {
			continue
		}
		if old := out[a.Key()]; old != nil && !a.ActiveAt.After(old.ActiveAt) {
			continue
		}
		out[a.Key()] = a
	}
	return out, nil
}

func isInt(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) && v == math.Trunc(v) }

func fmtTime(t time.Time) string { return t.UTC().Format(time.RFC3339) }

// Restored is what a start-up restore found.
type Restored struct {
	State evaluator.State
	// Source is where the routes' state came from: "prometheus" or "actuators".
	Source string
	// Report has a line per route and service saying what was restored.
	Report []string
	// Problems are what could not be read; the restore went on without it.
	Problems []error
}

// CurrentFunc reads the splits the actuators hold now (actuators.FanOut's
// Current); on error it may still return what some actuators could say.
type CurrentFunc func(ctx context.Context) (map[string]traffic.Split, error)

// Load rebuilds the state before the first decision: from Hermes's own
// series in Prometheus when they hold any route (Restore), else from what
// the actuators hold now (FromActuators) — never by assuming every route is
// healthy. Alerts come from Prometheus (RestoreAlerts) and from the saved
// ones of local, which know of alerts begun after Prometheus's last scrape;
// overrides and running drills come from local (the first tick ends the
// drills that expired meanwhile). query should bound each query's time, so a
// hung Prometheus cannot keep Hermes from starting.
func Load(ctx context.Context, p *evaluator.Policy, query promapi.QueryFunc, current CurrentFunc, local Local, now time.Time, opt RestoreOptions) Restored {
	overrides := local.Overrides
	var out Restored
	st, report, err := Restore(ctx, query, p, now, opt)
	out.Source = "prometheus"
	if err != nil || len(st.Routes) == 0 {
		if err != nil {
			out.Problems = append(out.Problems, fmt.Errorf("cannot restore state from Prometheus; using the actuators' current state: %w", err))
		}
		splits, err := current(ctx)
		if err != nil { // some or all actuators could not say; use the others
			out.Problems = append(out.Problems, fmt.Errorf("cannot read actuator state: %w", err))
		}
		st, report = FromActuators(p, splits, overrides, now)
		out.Source = "actuators"
	}
	al, err := RestoreAlerts(ctx, query, p, now, opt)
	if err != nil {
		out.Problems = append(out.Problems, fmt.Errorf("cannot restore alerts from Prometheus; only those saved on disk come back: %w", err))
	}
	st.Alerts = mergeAlerts(al, local.Alerts.restore(p, now, opt))
	st.Overrides = maps.Clone(overrides)
	st.Drills = local.Drills
	restoreMoves(&st, local.Moves)
	out.State, out.Report = st, report
	return out
}
