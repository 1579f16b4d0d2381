package replay

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"

	"github.com/hermes-failover/hermes/evaluator"
)

// DefaultWindow is how much of a backtest RunBacktest evaluates at once:
// one range query per signal over the window, then the window's ticks
// answered from memory. An hour at 15 s is 240 ticks, so the engine's
// per-query work is shared by 240 ticks while memory holds one window's
// vectors, not the whole range's.
const DefaultWindow = time.Hour

// QueryRange runs q over r on the loaded series, as Prometheus's range
// query API does; it makes a Backtest a RangeQuerier for RangeCache.
// Errors are typed as Query's are.
func (b *Backtest) QueryRange(ctx context.Context, q string, r v1.Range, _ ...v1.Option) (model.Value, v1.Warnings, v1.Infos, error) {
	qry, err := b.engine.NewRangeQuery(ctx, b, nil, q, r.Start, r.End, r.Step)
	if err != nil {
		return nil, nil, nil, &v1.Error{Type: v1.ErrBadData, Msg: err.Error()}
	}
	defer qry.Close()
	res := qry.Exec(ctx)
	if res.Err != nil {
		return nil, nil, nil, execError(res.Err)
	}
	m, ok := res.Value.(promql.Matrix)
	if !ok {
		return nil, nil, nil, fmt.Errorf("range query returned %s, not a matrix", res.Value.Type())
	}
	out := make(model.Matrix, 0, len(m))
	for _, s := range m {
		if len(s.Histograms) > 0 {
			return nil, nil, nil, fmt.Errorf("series %s: native histogram results are not supported", s.Metric)
		}
		metric := make(model.Metric, s.Metric.Len())
		s.Metric.Range(func(l labels.Label) { metric[model.LabelName(l.Name)] = model.LabelValue(l.Value) })
		ss := &model.SampleStream{Metric: metric, Values: make([]model.SamplePair, len(s.Floats))}
		for i, p := range s.Floats {
			ss.Values[i] = model.SamplePair{Timestamp: model.Time(p.T), Value: model.SampleValue(p.F)}
		}
		out = append(out, ss)
	}
	return out, nil, nil, nil
}

// Windowed answers a backtest's instant queries at its ticks from range
// queries over consecutive windows: when a tick falls past the current
// window it evaluates every query once over the next window (a
// RangeCache), and drops the previous one. Its Query method is a
// promapi.QueryFunc, safe for the concurrent calls of Collect.
type Windowed struct {
	api        RangeQuerier
	queries    []string
	step       time.Duration
	window     time.Duration
	start, end time.Time
	// Progress, when set, is called as each window starts with the time
	// already replayed and the whole range.
	Progress func(done, total time.Duration)

	mu    sync.Mutex
	cache *RangeCache
}

// NewWindowed replays api over [start, end] at step, window at a time.
func NewWindowed(api RangeQuerier, queries []string, start, end time.Time, step, window time.Duration) *Windowed {
	if window < step {
		window = step
	}
	return &Windowed{api: api, queries: queries, step: step, window: window, start: start, end: end}
}

// Query answers q at tick t from the window holding t, evaluating that
// window first if needed.
func (w *Windowed) Query(ctx context.Context, q string, t time.Time) (model.Vector, error) {
	w.mu.Lock()
	c := w.cache
	if c == nil || t.Before(c.Start()) || t.After(c.End()) {
		last := t.Add(w.window - w.step)
		if last.After(w.end) {
			last = w.end
		}
		if w.Progress != nil {
			w.Progress(t.Sub(w.start), w.end.Sub(w.start))
		}
		var err error
		if c, err = NewRangeCache(ctx, w.api, w.queries, t, last, w.step); err != nil {
			w.mu.Unlock()
			return nil, err
		}
		w.cache = c
	}
	w.mu.Unlock()
	return c.Query(ctx, q, t)
}

// RunBacktest replays b through pol as Run does, evaluating each signal
// once per window of DefaultWindow (range queries on the embedded engine)
// rather than once per tick; the ticks see the same vectors.
func RunBacktest(ctx context.Context, pol *evaluator.Policy, b *Backtest, progress func(done, total time.Duration), opts Options) (*Timeline, error) {
	step := pol.Config.Global.EvaluationInterval
	if step <= 0 {
		return nil, fmt.Errorf("evaluation_interval must be positive")
	}
	start := alignUp(b.Start(), step)
	w := NewWindowed(b, pol.Config.Queries(), start, b.End(), step, DefaultWindow)
	w.Progress = progress
	return Run(ctx, pol, w.Query, start, b.End(), opts)
}
