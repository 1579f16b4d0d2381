package persist

import (
	"cmp"
	"context"
	"fmt"
	"maps"
	"slices"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/evaluator"
)

// Series of the actuators that the live loop exports and Actuations reads
// back.
const (
	// MetricActuatorTrafficPercent is the share of a service's traffic an
	// actuator's backend holds for a route after its last successful
	// apply (as read back from the backend, else as applied).
	MetricActuatorTrafficPercent = "hermes_actuator_traffic_percent"
	// MetricActuatorFailingSince is the Unix time an actuator's applies
	// began to fail, 0 while its last apply succeeded.
	MetricActuatorFailingSince = "hermes_actuator_failing_since_timestamp_seconds"
	// ActuatorLabel names an actuator in Hermes's own series.
	ActuatorLabel = "actuator"
)

// Actuations reads back from Prometheus, from from to to at step, the
// applies that changed the split an actuator's backend holds for a service
// (at the first step that shows the new split) and the failures (at the
// time they began, from MetricActuatorFailingSince), oldest first. Each
// series is the highest over the replicas opt.Selector matches. found is
// false when Prometheus holds none of these series in the range, so that
// the caller can fall back on what it remembers.
func Actuations(ctx context.Context, api v1.API, from, to time.Time, step time.Duration, opt RestoreOptions) (acts []evaluator.Actuation, found bool, err error) {
	r := v1.Range{Start: from, End: to, Step: step}
	held, err := rangeQuery(ctx, api, fmt.Sprintf("max by (%s, %s, %s) (%s%s)", ActuatorLabel, ServiceLabel, RouteLabel, MetricActuatorTrafficPercent, opt.selector()), r)
	if err != nil {
		return nil, false, err
	}
	failing, err := rangeQuery(ctx, api, fmt.Sprintf("max by (%s) (%s%s)", ActuatorLabel, MetricActuatorFailingSince, opt.selector()), r)
	if err != nil {
		return nil, false, err
	}

	// The split each (actuator, service) holds at each step.
	type key struct{ actuator, service string }
	splits := map[key]map[model.Time]map[string]int{}
	services := map[string][]string{} // actuator → services it held
	for _, ss := range held {
		k := key{string(ss.Metric[ActuatorLabel]), string(ss.Metric[ServiceLabel])}
		if splits[k] == nil {
			splits[k] = map[model.Time]map[string]int{}
			services[k.actuator] = append(services[k.actuator], k.service)
		}
		for _, p := range ss.Values {
			if splits[k][p.Timestamp] == nil {
				splits[k][p.Timestamp] = map[string]int{}
			}
			splits[k][p.Timestamp][string(ss.Metric[RouteLabel])] = int(p.Value)
		}
	}
	for k, byTime := range splits {
		var prev map[string]int
		for _, ts := range slices.Sorted(maps.Keys(byTime)) {
			w := byTime[ts]
			if prev != nil && !maps.Equal(prev, w) {
				acts = append(acts, evaluator.Actuation{Time: ts.Time().UTC(), Actuator: k.actuator, Service: k.service, Weights: w, Result: evaluator.ActuationApplied})
			}
			prev = w
		}
	}
	for _, ss := range failing {
		name := string(ss.Metric[ActuatorLabel])
		seen := map[model.SampleValue]bool{}
		for _, p := range ss.Values {
			since := time.Unix(0, int64(float64(p.Value)*1e9)).UTC()
			if p.Value <= 0 || seen[p.Value] || since.Before(from) || since.After(to) {
				continue
			}
			seen[p.Value] = true
			svcs := services[name]
			if len(svcs) == 0 {
				svcs = []string{""}
			}
			for _, svc := range svcs {
				acts = append(acts, evaluator.Actuation{Time: since, Actuator: name, Service: svc, Result: evaluator.ActuationFailed})
			}
		}
	}
	slices.SortFunc(acts, func(a, b evaluator.Actuation) int {
		return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.Actuator, b.Actuator), cmp.Compare(a.Service, b.Service))
	})
	return acts, len(held)+len(failing) > 0, nil
}

// rangeQuery runs expr over r and returns its matrix.
func rangeQuery(ctx context.Context, api v1.API, expr string, r v1.Range) (model.Matrix, error) {
	val, _, _, err := api.QueryRange(ctx, expr, r)
	if err != nil {
		return nil, fmt.Errorf("history: %s: %w", expr, err)
	}
	m, ok := val.(model.Matrix)
	if !ok {
		return nil, fmt.Errorf("history: %s returned %s, not a matrix", expr, val.Type())
	}
	return m, nil
}
