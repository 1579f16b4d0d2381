package promapi

import (
	"context"
	"time"

	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/labelname"
	"github.com/hermes-failover/hermes/rules"
)

// byRoute runs rq into an Answer over routes and returns what it got as a
// vector: a sample per route with one series, marked by its part when it
// is evidence. Tests compare it with Client.Query's answers.
func byRoute(rq RouteQueryFunc, routes ...string) QueryFunc {
	return func(ctx context.Context, q string, t time.Time) (model.Vector, error) {
		a := newAnswer(newRoutePositions(routes), true, nil)
		if err := rq(ctx, q, t, a); err != nil {
			return nil, err
		}
		var vec model.Vector
		for i, r := range routes {
			if a.nValues[i] == 1 {
				vec = append(vec, &model.Sample{Metric: model.Metric{labelname.Route: model.LabelValue(r)}, Value: model.SampleValue(a.values[i])})
			}
			if a.nEvidence[i] == 1 {
				vec = append(vec, &model.Sample{Metric: model.Metric{labelname.Route: model.LabelValue(r), rules.PartLabel: rules.PartEvidence}, Value: model.SampleValue(a.evidence[i])})
			}
		}
		return vec, nil
	}
}
