package persist

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/labelname"
	"github.com/hermes-failover/hermes/runner/series"
)

// Series of the actuators that the actuation stage exports and
// Actuations reads back (package series has their long form).
const (
	MetricActuatorTrafficRatio = series.ActuatorTrafficRatio
	MetricActuatorChanged      = series.ActuatorChanged
	MetricActuatorFailingSince = series.ActuatorFailingSince
	// ActuatorLabel names an actuator in Hermes's own series.
	ActuatorLabel = labelname.Actuator
)

// Actuations reads back from Prometheus the actuations from from to to,
// oldest first: the applies that gave a service a new split, at the time
// MetricActuatorChanged holds, with the split MetricActuatorTrafficRatio
// shows with it; and the failures, at the time MetricActuatorFailingSince
// holds, for each service the actuator held. Times are exact whatever the
// step and scrape interval; only an actuation overwritten before a scrape
// is lost. Each series is the highest over the replicas opt.Selector
// matches. found is false when Prometheus holds none of these series in
// the range, so that the caller can fall back on what it remembers.
func Actuations(ctx context.Context, api v1.API, from, to time.Time, step time.Duration, opt RestoreOptions) (acts []evaluator.Actuation, found bool, err error) {
	r := v1.Range{Start: from, End: to, Step: step}
	var m [3]model.Matrix
	for i, q := range []string{
		opt.ratioQuery("%s", MetricActuatorTrafficRatio, LegacyActuatorTrafficPercent, ActuatorLabel, ServiceLabel, RouteLabel),
		fmt.Sprintf("max by (%s, %s) (%s%s)", ActuatorLabel, ServiceLabel, MetricActuatorChanged, opt.selector()),
		fmt.Sprintf("max by (%s) (%s%s)", ActuatorLabel, MetricActuatorFailingSince, opt.selector()),
	} {
		if m[i], err = rangeQuery(ctx, api, q, r); err != nil {
			return nil, false, err
		}
	}
	held, changed, failing := m[0], m[1], m[2]

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
			splits[k][p.Timestamp][string(ss.Metric[RouteLabel])] = int(math.Round(float64(p.Value) * 100))
		}
	}
	// at calls f once per distinct time in [from, to] that ss holds, with
	// the step that first showed it.
	at := func(ss *model.SampleStream, f func(at time.Time, step model.Time)) {
		seen := map[model.SampleValue]bool{}
		for _, p := range ss.Values {
			t := time.UnixMilli(int64(math.Round(float64(p.Value) * 1e3))).UTC()
			if p.Value > 0 && !seen[p.Value] && !t.Before(from) && !t.After(to) {
				f(t, p.Timestamp)
			}
			seen[p.Value] = true
		}
	}
	for _, ss := range changed {
		k := key{string(ss.Metric[ActuatorLabel]), string(ss.Metric[ServiceLabel])}
		at(ss, func(t time.Time, step model.Time) {
			acts = append(acts, evaluator.Actuation{Time: t, Actuator: k.actuator, Service: k.service, Weights: splits[k][step], Result: evaluator.ActuationApplied})
		})
	}
	for _, ss := range failing {
		name := string(ss.Metric[ActuatorLabel])
		svcs := services[name]
		if len(svcs) == 0 {
			svcs = []string{""}
		}
		at(ss, func(t time.Time, _ model.Time) {
			for _, svc := range svcs {
				acts = append(acts, evaluator.Actuation{Time: t, Actuator: name, Service: svc, Result: evaluator.ActuationFailed})
			}
		})
	}
	slices.SortFunc(acts, func(a, b evaluator.Actuation) int {
		return cmp.Or(a.Time.Compare(b.Time), cmp.Compare(a.Actuator, b.Actuator), cmp.Compare(a.Service, b.Service))
	})
	return acts, len(held)+len(changed)+len(failing) > 0, nil
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
