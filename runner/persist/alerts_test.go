package persist

import (
	"context"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/runner/alerting"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

const testPolicy = `
global: {evaluation_interval: 15s, query_timeout: 5s}` + testenv.HardFailScoring + `
levels:
  - {name: warm, below: 85, recover_above: 90, dwell: 1m, primary_percent: 95, retries: true}
  - {name: shed, below: 75, recover_above: 82, dwell: 1m, primary_percent: 50, retries: true}
  - {name: failover, below: 60, recover_above: 80, dwell: 2m, primary_percent: 0}
failback: {stages: [50, 100], observe: 5m, min_score: 80, max_completed: 1, window: 1d, manual_after: 1h}
services:
  - name: chat
    routes: [free, paid]
alerts:
  - name: HermesRouteScoreCritical
    tier: A
    expr: score < 60
    for: 50s
    labels: {team: llm-platform}
    summary: 'Route {{ .Route }} scores {{ printf "%.0f" .Score }}.'
  - name: HermesRouteScoreDegraded
    tier: B
    expr: score < 75
    for: 10m
  - name: HermesAllRoutesBad
    tier: A
    scope: service
    expr: score < 60
`

func snapshot(p *evaluator.Policy, at time.Time, hardFail map[string]float64) evaluator.Input {
	s := evaluator.Snapshot{Time: at}
	for _, r := range p.Routes() {
		s.Set(r, "hard_fail_ratio", evaluator.Sample{Value: hardFail[r]})
	}
	return evaluator.Input{Snapshot: s}
}

// exported gathers the active-since series as Prometheus would return them
// for Restore's query: the value of each, by its grouping labels.
func exported(t *testing.T, reg *prometheus.Registry) model.Vector {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var vec model.Vector
	for _, mf := range mfs {
		if mf.GetName() != MetricAlertActiveSince {
			continue
		}
		for _, m := range mf.GetMetric() {
			ls := model.Metric{}
			for _, lp := range m.GetLabel() {
				if slices.Contains(restoreBy, lp.GetName()) && lp.GetValue() != "" {
					ls[model.LabelName(lp.GetName())] = model.LabelValue(lp.GetValue())
				}
			}
			vec = append(vec, &model.Sample{Metric: ls, Value: model.SampleValue(m.GetGauge().GetValue())})
		}
	}
	return vec
}

func TestRestoreRoundTrip(t *testing.T) {
	p := testenv.Policy(t, testPolicy)
	tick := 15 * time.Second
	bad := map[string]float64{"free": 0.5, "paid": 0}

	// Before the restart: free scores 50 from t0; the critical alerts fire
	// at the first tick 50s after (t0+60s), the degraded one stays pending.
	var st evaluator.State
	var now time.Time
	for i := range 6 {
		now = t0.Add(time.Duration(i) * tick)
		st, _ = evaluator.Step(p, st, snapshot(p, now, bad), now)
	}
	reg := prometheus.NewRegistry()
	e := NewExporter(reg)
	e.Export(p, st, nil, now)
	if got := slices.Sorted(maps.Keys(st.Alerts)); strings.Join(got, " ") !=
		"HermesAllRoutesBad/chat/ HermesRouteScoreCritical/chat/free HermesRouteScoreDegraded/chat/free" {
		t.Fatalf("alerts before the restart: %v", got)
	}

	var asked string
	query := func(_ context.Context, q string, at time.Time) (model.Vector, error) {
		if strings.Contains(q, "timestamp(") {
			// Every series, the alerts' and the levels', was last scraped
			// at the last export (see TestRestoreAlertsHonoursStaleness).
			vec := exported(t, reg)
			vec = append(vec, &model.Sample{Metric: model.Metric{"alertname": "HermesGone", "service": "chat", "route": "free"}},
				&model.Sample{Metric: model.Metric{}})
			for _, smp := range vec {
				smp.Value = model.SampleValue(now.Unix())
			}
			return vec, nil
		}
		asked = q
		vec := exported(t, reg)
		// An HA replica that had the degraded alert active since an hour
		// earlier: the later start wins, as in evaluator.Restore.
		later := model.Metric{"alertname": "HermesRouteScoreDegraded", "service": "chat", "route": "free", "level": "normal"}
		vec = append(vec, &model.Sample{Metric: later, Value: model.SampleValue(t0.Add(-time.Hour).Unix())},
			// Skipped: unknown rule, route outside the service, a route on a service-scope rule, bad values.
			&model.Sample{Metric: model.Metric{"alertname": "HermesGone", "service": "chat", "route": "free"}, Value: 1},
			&model.Sample{Metric: model.Metric{"alertname": "HermesRouteScoreCritical", "service": "chat", "route": "other"}, Value: 1},
			&model.Sample{Metric: model.Metric{"alertname": "HermesAllRoutesBad", "service": "chat", "route": "free"}, Value: 1},
			&model.Sample{Metric: model.Metric{"alertname": "HermesRouteScoreCritical", "service": "chat", "route": "paid"}, Value: model.SampleValue(math.NaN())})
		return vec, nil
	}
	restart := now.Add(30 * time.Second)
	restored, err := RestoreAlerts(context.Background(), query, p, restart, RestoreOptions{Selector: `job="hermes"`, Tolerance: 30 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	if want := `max by (alertname, service, route, actuator, level, drill) (last_over_time(hermes_alert_active_since_timestamp_seconds{job="hermes"}[30m]))`; asked != want {
		t.Errorf("query = %s\nwant    %s", asked, want)
	}
	if got, want := slices.Sorted(maps.Keys(restored)), slices.Sorted(maps.Keys(st.Alerts)); !slices.Equal(got, want) {
		t.Fatalf("restored keys %v, want the evaluator's %v", got, want)
	}
	for k, want := range st.Alerts {
		got := restored[k]
		if got.State != want.State || !got.ActiveAt.Equal(want.ActiveAt) || !got.FiredAt.Equal(want.FiredAt) ||
			!maps.Equal(got.Labels, want.Labels) || got.Rule != want.Rule || got.Tier != want.Tier || got.Route != want.Route {
			t.Errorf("%s restored as\n%+v\nwant\n%+v", k, *got, *want)
		}
	}

	// After the restart the evaluator goes on: nothing fires again (no
	// second page), and Alertmanager sees the same alerts.
	after := restart.Truncate(tick).Add(tick)
	next, evs := evaluator.Step(p, evaluator.State{Alerts: restored}, snapshot(p, after, bad), after)
	for _, e := range evs {
		if e.Type == evaluator.EventAlert {
			t.Errorf("alert event after the restart: %+v", e)
		}
	}
	before := alerting.Payload(st.Alerts, now, time.Minute, "http://hermes")
	again := alerting.Payload(next.Alerts, after, time.Minute, "http://hermes")
	if len(before) != len(again) {
		t.Fatalf("%d alerts sent before the restart, %d after", len(before), len(again))
	}
	for i := range before {
		if !maps.Equal(before[i].Labels, again[i].Labels) || before[i].StartsAt != again[i].StartsAt {
			t.Errorf("alert %d changed across the restart: %v %s → %v %s", i, before[i].Labels, before[i].StartsAt, again[i].Labels, again[i].StartsAt)
		}
		if b, a := before[i].Annotations["summary"], again[i].Annotations["summary"]; a != b {
			t.Errorf("alert %d: summary %q, want it rendered again: %q", i, a, b)
		}
	}

	// If the route recovered while Hermes was away, the resolve is sent.
	healed, evs := evaluator.Step(p, evaluator.State{Alerts: restored}, snapshot(p, after, nil), after)
	var resolved []string
	for _, e := range evs {
		if e.Type == evaluator.EventAlert && e.State == "resolved" {
			resolved = append(resolved, e.Name)
		}
	}
	if slices.Sort(resolved); strings.Join(resolved, " ") != "HermesAllRoutesBad HermesRouteScoreCritical" {
		t.Errorf("resolved after the restart: %v", resolved)
	}
	for _, a := range alerting.Payload(healed.Alerts, after, time.Minute, "http://hermes") {
		if time.Time(a.EndsAt) != after {
			t.Errorf("%v: endsAt %s, want the resolution %s", a.Labels, a.EndsAt, after)
		}
	}

	// The exporter forgets alerts that are no longer active.
	e.Export(p, healed, nil, after)
	if vec := exported(t, reg); len(vec) != 0 {
		t.Errorf("active-since series left after the resolve: %v", vec)
	}
}

func TestRestoreQueryFails(t *testing.T) {
	p := testenv.Policy(t, testPolicy)
	_, err := RestoreAlerts(context.Background(), func(context.Context, string, time.Time) (model.Vector, error) {
		return nil, context.DeadlineExceeded
	}, p, t0, RestoreOptions{})
	if err == nil || !strings.Contains(err.Error(), "[1h") {
		t.Errorf("err = %v, want the failed query (default tolerance 1h) named", err)
	}
}

// TestAlertSeriesHaveNoEmptyLabels: a route's alert is exported without
// actuator="" (nor any other empty label), a service's without route.
func TestAlertSeriesHaveNoEmptyLabels(t *testing.T) {
	p := testenv.Policy(t, testPolicy)
	var st evaluator.State
	var now time.Time
	for i := range 6 {
		now = t0.Add(time.Duration(i) * 15 * time.Second)
		st, _ = evaluator.Step(p, st, snapshot(p, now, map[string]float64{"free": 0.5, "paid": 0.5}), now)
	}
	reg := prometheus.NewRegistry()
	NewExporter(reg).Export(p, st, nil, now)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, mf := range mfs {
		if mf.GetName() != MetricAlertActiveSince {
			continue
		}
		for _, m := range mf.GetMetric() {
			n++
			for _, lp := range m.GetLabel() {
				if lp.GetValue() == "" {
					t.Errorf("%s has the empty label %s=\"\"", MetricAlertActiveSince, lp.GetName())
				}
			}
		}
	}
	if n < 2 {
		t.Errorf("%d active alerts exported, want a route's and a service's", n)
	}
}
