package persist

import (
	"context"
	"fmt"
	"math"
	"strings"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/traffic"
)

// MetricRouteScore is the route's health score that telemetry exports; the
// history reads it back.
const MetricRouteScore = "hermes_route_score"

// History reads Hermes's own series back from Prometheus as one tick per
// step from from to to: each route's score and level and each service's
// split. Each is the highest over the replicas that opt.Selector matches
// (max by), so two replicas draw one line, and the history survives
// restarts of Hermes. Ticks without any series are left out.
func History(ctx context.Context, api v1.API, from, to time.Time, step time.Duration, opt RestoreOptions) ([]evaluator.Tick, error) {
	r := v1.Range{Start: from, End: to, Step: step}
	byTime := map[model.Time]*evaluator.Tick{}
	tick := func(ts model.Time) *evaluator.Tick {
		tk := byTime[ts]
		if tk == nil {
			tk = &evaluator.Tick{Time: ts.Time().UTC(), Routes: map[string]evaluator.TickRoute{}, Splits: map[string]map[string]int{}}
			byTime[ts] = tk
		}
		return tk
	}
	for _, q := range []struct {
		name string
		by   []string
		set  func(tk *evaluator.Tick, m model.Metric, v float64)
	}{
		{MetricRouteScore, []string{RouteLabel}, func(tk *evaluator.Tick, m model.Metric, v float64) {
			rt := tk.Routes[string(m[RouteLabel])]
			rt.Score = v
			tk.Routes[string(m[RouteLabel])] = rt
		}},
		{MetricRouteLevel, []string{RouteLabel}, func(tk *evaluator.Tick, m model.Metric, v float64) {
			rt := tk.Routes[string(m[RouteLabel])]
			rt.Level = traffic.Level(int(v)).String()
			tk.Routes[string(m[RouteLabel])] = rt
		}},
		{MetricRouteTrafficRatio, []string{ServiceLabel, RouteLabel}, func(tk *evaluator.Tick, m model.Metric, v float64) {
			svc := string(m[ServiceLabel])
			if tk.Splits[svc] == nil {
				tk.Splits[svc] = map[string]int{}
			}
			tk.Splits[svc][string(m[RouteLabel])] = int(math.Round(v * 100))
		}},
	} {
		expr := fmt.Sprintf("max by (%s) (%s%s)", strings.Join(q.by, ", "), q.name, opt.selector())
		if q.name == MetricRouteTrafficRatio {
			expr = opt.ratioQuery("%s", MetricRouteTrafficRatio, LegacyRouteTrafficPercent, q.by...)
		}
		m, err := rangeQuery(ctx, api, expr, r)
		if err != nil {
			return nil, err
		}
		for _, ss := range m {
			for _, p := range ss.Values {
				q.set(tick(p.Timestamp), ss.Metric, float64(p.Value))
			}
		}
	}
	var out []evaluator.Tick
	for ts := from.Truncate(time.Millisecond); !ts.After(to); ts = ts.Add(step) {
		if tk, ok := byTime[model.TimeFromUnixNano(ts.UnixNano())]; ok {
			out = append(out, *tk)
		}
	}
	return out, nil
}
