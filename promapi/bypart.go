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
// into its parts (rules.TickParts: the query, the evidence query and each
// window's query and volume), f answers each, and the series come back
// marked with rules.PartLabel as a real engine marks them. A window part
// that f fails is left out, as a part without data: it is no further
// evidence, so a fake that knows only a signal's query and evidence keeps
// working. Any other query goes to f unchanged.
func ByPart(f QueryFunc) QueryFunc {
	return func(ctx context.Context, q string, t time.Time) (model.Vector, error) {
		parts, ok := rules.TickParts(q)
		if !ok {
			return f(ctx, q, t)
		}
		var out model.Vector
		for i, p := range parts {
			vec, err := f(ctx, p.Query, t)
			switch {
			case err != nil && i < 2:
				return nil, err
			case err != nil:
				continue
			}
			for _, s := range vec {
				m := s.Metric.Clone()
				m[rules.PartLabel] = model.LabelValue(p.Part)
				out = append(out, &model.Sample{Metric: m, Value: s.Value, Timestamp: s.Timestamp})
			}
		}
		return out, nil
	}
}
