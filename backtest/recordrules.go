package backtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/rulefmt"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
)

// LoadRecordingRules reads a Prometheus rule file (rulefmt, as Prometheus
// loads it) for Record. Alerting rules in it are skipped.
func LoadRecordingRules(path string) ([]rulefmt.RuleGroup, error) {
	groups, errs := rulefmt.ParseFile(path, false, model.UTF8Validation, parser.NewParser(parser.Options{}), nil)
	if len(errs) > 0 {
		return nil, fmt.Errorf("recording rules %s: %w", path, errors.Join(errs...))
	}
	return groups.Groups, nil
}

// Record evaluates recording rules over f as a Prometheus loaded with them
// would: every group at its interval (the file's interval when it sets
// none), on the ticks from f's first sample to its last, each rule's
// result written back as the series of its record (with the rule's
// labels), and a stale marker where a recorded series stops. It returns f
// with the recorded series added; f is not modified.
//
// Each rule is evaluated once over the whole range (a range query), in
// file order, rather than every rule at every tick: that is the same as
// long as a rule reads only records of rules above it, which Record
// checks. (Prometheus runs groups independently; in Record a group sees
// the records of the groups above it at the same tick.)
func Record(ctx context.Context, f *File, groups []rulefmt.RuleGroup) (*File, error) {
	b, err := Open(f)
	if err != nil {
		return nil, err
	}
	out := &File{Interval: f.Interval, Series: slices.Clone(f.Series)}
	records, defined := map[string]bool{}, map[string]bool{}
	for _, g := range groups {
		for _, r := range g.Rules {
			records[r.Record] = r.Record != ""
		}
	}
	for _, g := range groups {
		step := time.Duration(g.Interval)
		if step <= 0 {
			step = f.Interval
		}
		start, end := alignUp(b.Start(), step), b.End()
		for _, r := range g.Rules {
			if r.Record == "" {
				continue
			}
			if err := readsOnlyAbove(r, records, defined); err != nil {
				return nil, fmt.Errorf("group %s: %w", g.Name, err)
			}
			defined[r.Record] = true
			recorded, err := recordRule(ctx, b, r, start, end, step)
			if err != nil {
				return nil, fmt.Errorf("group %s: record %s: %w", g.Name, r.Record, err)
			}
			out.Series = append(out.Series, recorded...)
			if b, err = Open(out); err != nil {
				return nil, fmt.Errorf("group %s: record %s: %w", g.Name, r.Record, err)
			}
		}
	}
	return out, nil
}

// readsOnlyAbove checks that r reads no record of its own or of a rule
// below it: a name in records not yet defined.
func readsOnlyAbove(r rulefmt.Rule, records, defined map[string]bool) error {
	e, err := parser.NewParser(parser.Options{}).ParseExpr(r.Expr)
	if err != nil {
		return fmt.Errorf("record %s: %w", r.Record, err)
	}
	var bad error
	parser.Inspect(e, func(n parser.Node, _ []parser.Node) error {
		if vs, ok := n.(*parser.VectorSelector); ok && records[vs.Name] && !defined[vs.Name] {
			bad = fmt.Errorf("record %s reads %s, recorded by itself or a rule below it, which one range evaluation per rule cannot replay", r.Record, vs.Name)
		}
		return nil
	})
	return bad
}

// recordRule evaluates r over [start, end] at step and returns its series.
func recordRule(ctx context.Context, b *Store, r rulefmt.Rule, start, end time.Time, step time.Duration) ([]Series, error) {
	qry, err := b.engine.NewRangeQuery(ctx, b, nil, r.Expr, start, end, step)
	if err != nil {
		return nil, err
	}
	defer qry.Close()
	res := qry.Exec(ctx)
	if res.Err != nil {
		return nil, res.Err
	}
	m, ok := res.Value.(promql.Matrix)
	if !ok {
		return nil, fmt.Errorf("expression returns %s, not a vector", res.Value.Type())
	}
	stale := math.Float64frombits(value.StaleNaN)
	last := end.UnixMilli()
	out := make([]Series, 0, len(m))
	seen := map[string]bool{}
	for _, s := range m {
		if len(s.Histograms) > 0 {
			return nil, fmt.Errorf("series %s: native histogram results are not supported", s.Metric)
		}
		lb := labels.NewBuilder(s.Metric)
		lb.Set(labels.MetricName, r.Record)
		for k, v := range r.Labels {
			lb.Set(k, v)
		}
		ls := lb.Labels()
		if key := ls.String(); seen[key] {
			return nil, fmt.Errorf("two series recorded as %s", ls)
		} else {
			seen[key] = true
		}
		// A series that stops before the next tick gets a stale marker
		// there, as Prometheus writes one when a rule stops returning it.
		samples := make([]Sample, 0, len(s.Floats)+1)
		for i, p := range s.Floats {
			samples = append(samples, Sample{T: p.T, F: p.F})
			next := p.T + step.Milliseconds()
			if next <= last && (i+1 == len(s.Floats) || s.Floats[i+1].T != next) {
				samples = append(samples, Sample{T: next, F: stale})
			}
		}
		out = append(out, Series{Labels: ls, Samples: samples})
	}
	return out, nil
}
