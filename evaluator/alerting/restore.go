package alerting

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/rules"
)

// restoreBy are the labels Restore groups by: an alert's identity, and its
// level label (fixed when the alert became active).
var restoreBy = []string{"alertname", "service", "route", "level"}

// Restore rebuilds the pending and firing alerts of the evaluator's
// State.Alerts from MetricAlertActiveSince, read through query at now:
//
//	max by (alertname, service, route, level) (last_over_time(hermes_alert_active_since_timestamp_seconds{SELECTOR}[TOLERANCE]))
//
// As with ALERTS_FOR_STATE, the value is the Unix time the alert became
// active; of an HA pair the later one wins, as in evaluator.Restore. An
// alert is firing when ActiveAt + for ≤ now (its FiredAt is the first tick
// at or after that), else pending. Its labels are rebuilt from the alert
// rule exactly as the evaluator renders them, so Alertmanager sees the same
// alert (no second page); the next tick renders its annotations again, or
// resolves it (no lost resolve). LastTrue is now, so keep_firing_for
// counts from the restart. Series of unknown rules, services or routes, and
// values that are not a time at or before now, are skipped; an active time
// in the future is taken as now.
//
// The map's keys are the evaluator's (rule/service/route): give it to the
// restored State.Alerts.
func Restore(ctx context.Context, query evaluator.QueryFunc, p *evaluator.Policy, now time.Time, opt evaluator.RestoreOptions) (map[string]*evaluator.AlertState, error) {
	q := restoreQuery(opt)
	vec, err := query(ctx, q, now)
	if err != nil {
		return nil, fmt.Errorf("restoring alerts: query %s: %w", q, err)
	}
	byName := map[string]rules.AlertRuleConfig{}
	for _, a := range p.Config.Alerts {
		byName[a.Name] = a
	}
	services := map[string]rules.ServiceConfig{}
	for _, svc := range p.Config.Services {
		services[svc.Name] = svc
	}
	interval := p.Config.Global.EvaluationInterval
	out := map[string]*evaluator.AlertState{}
	for _, smp := range vec {
		name := string(smp.Metric["alertname"])
		svcName := string(smp.Metric["service"])
		route := string(smp.Metric["route"])
		r, ok := byName[name]
		svc, known := services[svcName]
		v := float64(smp.Value)
		switch {
		case !ok || !known:
			continue
		case r.Scope == rules.ScopeService && route != "":
			continue
		case r.Scope != rules.ScopeService && !slices.Contains(svc.Routes, route):
			continue
		case math.IsNaN(v) || math.IsInf(v, 0) || v <= 0:
			continue
		}
		key := alertKey(name, svcName, route)
		activeAt := time.UnixMilli(int64(math.Round(v * 1000))).UTC()
		if activeAt.After(now) {
			activeAt = now
		}
		if old := out[key]; old != nil && !activeAt.After(old.ActiveAt) {
			continue
		}
		as := &evaluator.AlertState{
			Rule: name, Tier: r.Tier, Service: svcName, Route: route,
			Status: evaluator.AlertPending, ActiveAt: activeAt, LastTrue: now,
			Labels: alertLabels(r, svcName, route, string(smp.Metric["level"])),
			Annotations: map[string]string{
				"summary": fmt.Sprintf("%s on %s: restored after a restart of Hermes.", name, where(svcName, route)),
			},
		}
		if !activeAt.Add(r.For).After(now) {
			as.Status = evaluator.AlertFiring
			as.FiredAt = firedAt(activeAt, r.For, interval, now)
		}
		out[key] = as
	}
	return out, nil
}

func restoreQuery(opt evaluator.RestoreOptions) string {
	tol := opt.Tolerance
	if tol <= 0 {
		tol = evaluator.DefaultRestoreTolerance
	}
	sel := strings.TrimSpace(opt.Selector)
	sel = strings.TrimSpace(strings.TrimSuffix(strings.TrimPrefix(sel, "{"), "}"))
	if sel != "" {
		sel = "{" + sel + "}"
	}
	return fmt.Sprintf("max by (%s) (last_over_time(%s%s[%s]))",
		strings.Join(restoreBy, ", "), MetricAlertActiveSince, sel, model.Duration(tol))
}

// firedAt is the first tick at or after activeAt + forDur (ticks are
// multiples of interval after activeAt, itself a tick), at most now.
func firedAt(activeAt time.Time, forDur, interval time.Duration, now time.Time) time.Time {
	t := activeAt.Add(forDur)
	if interval > 0 {
		ticks := (forDur + interval - 1) / interval
		t = activeAt.Add(ticks * interval)
	}
	if t.After(now) {
		return now
	}
	return t
}

// alertKey is the evaluator's key of an alert instance in State.Alerts.
func alertKey(rule, service, route string) string { return rule + "/" + service + "/" + route }

// alertLabels are the labels the evaluator gives an alert of rule r.
func alertLabels(r rules.AlertRuleConfig, service, route, level string) map[string]string {
	labels := map[string]string{"alertname": r.Name, "severity": tierSeverity[r.Tier], "tier": r.Tier, "service": service}
	if route != "" {
		labels["route"] = route
		labels["level"] = level
	}
	for k, v := range r.Labels {
		labels[k] = v
	}
	return labels
}

func where(service, route string) string {
	if route == "" {
		return "service " + service
	}
	return "route " + route + " of " + service
}
