package promapi

import (
	"context"
	"time"

	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/rules"
)

// ByPart adapts f, a source that answers a query by its text rather than
// by evaluating PromQL (a fake for fault injection, fixed answers), to the
// queries Collect sends: a signal's TickQuery with evidence is split back
// into its query and evidence query (rules.SplitTickQuery), f answers
// each, and the series come back marked with rules.PartLabel as a real
// engine marks them. Any other query goes to f unchanged.
func ByPart(f QueryFunc) QueryFunc {
	return func(ctx context.Context, q string, t time.Time) (model.Vector, error) {
		query, evidence, ok := rules.SplitTickQuery(q)
		if !ok {
			return f(ctx, q, t)
		}
		var out model.Vector
		for _, p := range []struct{ q, part string }{{query, rules.PartValue}, {evidence, rules.PartEvidence}} {
			vec, err := f(ctx, p.q, t)
			if err != nil {
				return nil, err
			}
			for _, s := range vec {
				m := s.Metric.Clone()
				m[rules.PartLabel] = model.LabelValue(p.part)
				out = append(out, &model.Sample{Metric: m, Value: s.Value, Timestamp: s.Timestamp})
			}
		}
		return out, nil
	}
}
