package backtest

import (
	"context"
	"fmt"
	"sync"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/promapi"
)

// DefaultWindow is how much of a backtest RunStore evaluates at once:
// one range query per signal over the window, then the window's ticks
// answered from memory. A quarter of an hour at 15 s is 60 ticks, so the
// engine's per-query work is shared by 60 ticks while memory holds two
// windows' vectors and the recordings a window's length beyond what the
// queries read back, not the whole range's. Since the evidence windows
// (more series per query), half an hour held too much: 24 h of 100 routes
// (hermes backtest --series) peaked at 331-410 MB resident against
// 233-239 MB with a quarter, for 5-8 % more CPU (two runs each, in turn,
// on a loaded machine). Before them an hour had cost no less CPU than
// half an hour and a third more memory.
const DefaultWindow = 15 * time.Minute

// QueryRange runs q over r on the loaded series, as Prometheus's range
// query API does; it makes a Store a RangeQuerier for RangeCache.
// Errors are typed as Query's are.
func (b *Store) QueryRange(ctx context.Context, q string, r v1.Range, _ ...v1.Option) (model.Value, v1.Warnings, v1.Infos, error) {
	return b.queryRange(ctx, b, q, r)
}

// queryRange runs q over r on the engine of b, reading from.
func (b *Store) queryRange(ctx context.Context, from storage.Queryable, q string, r v1.Range) (model.Value, v1.Warnings, v1.Infos, error) {
	var out model.Matrix
	err := b.queryMatrix(ctx, from, q, r, func(m promql.Matrix) (err error) {
		out, err = toModelMatrix(m)
		return err
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return out, nil, nil, nil
}

// rangeMatrix is QueryRange handing the engine's matrix to use before the
// query is closed (matrixQuerier); a Store evaluates nothing natively.
func (b *Store) rangeMatrix(ctx context.Context, q string, r v1.Range, use func(promql.Matrix) error, _ func([]nqSeries) error) error {
	return b.queryMatrix(ctx, b, q, r, use)
}

// queryMatrix runs q over r on the engine of b, reading from, and hands
// the resulting matrix to use before the query is closed. Errors are typed
// as QueryRange's.
func (b *Store) queryMatrix(ctx context.Context, from storage.Queryable, q string, r v1.Range, use func(promql.Matrix) error) error {
	qry, err := b.engine.NewRangeQuery(ctx, from, nil, q, r.Start, r.End, r.Step)
	if err != nil {
		return &v1.Error{Type: v1.ErrBadData, Msg: err.Error()}
	}
	defer qry.Close()
	res := qry.Exec(ctx)
	if res.Err != nil {
		return execError(res.Err)
	}
	m, ok := res.Value.(promql.Matrix)
	if !ok {
		return fmt.Errorf("range query returned %s, not a matrix", res.Value.Type())
	}
	return use(m)
}

// toModelMatrix converts an engine matrix to the client's representation.
func toModelMatrix(m promql.Matrix) (model.Matrix, error) {
	out := make(model.Matrix, 0, len(m))
	for _, s := range m {
		if len(s.Histograms) > 0 {
			return nil, fmt.Errorf("series %s: native histogram results are not supported", s.Metric)
		}
		metric := make(model.Metric, s.Metric.Len())
		s.Metric.Range(func(l labels.Label) { metric[model.LabelName(l.Name)] = model.LabelValue(l.Value) })
		ss := &model.SampleStream{Metric: metric, Values: make([]model.SamplePair, len(s.Floats))}
		for i, p := range s.Floats {
			ss.Values[i] = model.SamplePair{Timestamp: model.Time(p.T), Value: model.SampleValue(p.F)}
		}
		out = append(out, ss)
	}
	return out, nil
}

// stepsModelMatrix converts series with their values at the steps of r
// (nativeQuery.evaluateSteps) to the client's representation.
func stepsModelMatrix(ss []nqSeries, r v1.Range) model.Matrix {
	from, step := r.Start.UnixMilli(), r.Step.Milliseconds()
	out := make(model.Matrix, 0, len(ss))
	for _, s := range ss {
		metric := make(model.Metric, s.labels.Len())
		s.labels.Range(func(l labels.Label) { metric[model.LabelName(l.Name)] = model.LabelValue(l.Value) })
		ms := &model.SampleStream{Metric: metric}
		for k, h := range s.has {
			if h {
				ms.Values = append(ms.Values, model.SamplePair{Timestamp: model.Time(from + int64(k)*step), Value: model.SampleValue(s.vals[k])})
			}
		}
		out = append(out, ms)
	}
	return out
}

// Windowed answers a backtest's instant queries at its ticks from range
// queries over consecutive windows: when a tick falls past the current
// window it evaluates every query once over the next window (a
// RangeCache), and drops the previous one. While the ticks of a window are
// stepped it already evaluates the next one, so the engine and the core
// share the cores; memory holds two windows' results. Its Query method is
// a promapi.QueryFunc, safe for the concurrent calls of Collect. Close
// stops the evaluation ahead.
type Windowed struct {
	api        RangeQuerier
	queries    []string
	step       time.Duration
	window     time.Duration
	start, end time.Time
	// Progress, when set, is called as each window starts with the time
	// already replayed and the whole range.
	Progress func(done, total time.Duration)

	// base is the context windows are evaluated in; nil for the context of
	// the query that needs the window, without its deadline: a tick's
	// query timeout bounds one query, not the evaluation of a window.
	base context.Context

	mu    sync.Mutex
	cache *RangeCache
	// ahead is the window being evaluated ahead, nil if none.
	ahead *pending
}

// pending is a window evaluated in the background.
type pending struct {
	from   time.Time
	done   chan struct{}
	cancel context.CancelFunc
	cache  *RangeCache
	err    error
}

// NewWindowed replays api over [start, end] at step, window at a time.
func NewWindowed(api RangeQuerier, queries []string, start, end time.Time, step, window time.Duration) *Windowed {
	if window < step {
		window = step
	}
	return &Windowed{api: api, queries: queries, step: step, window: window, start: start, end: end}
}

// Query answers q at tick t from the window holding t, evaluating that
// window first if it is not already.
func (w *Windowed) Query(ctx context.Context, q string, t time.Time) (model.Vector, error) {
	c, err := w.cacheFor(ctx, t)
	if err != nil {
		return nil, err
	}
	return c.Query(ctx, q, t)
}

// QueryRoutes is Query as a promapi.RouteQueryFunc (RangeCache.QueryRoutes).
func (w *Windowed) QueryRoutes(ctx context.Context, q string, t time.Time, into *promapi.Answer) error {
	c, err := w.cacheFor(ctx, t)
	if err != nil {
		return err
	}
	return c.QueryRoutes(ctx, q, t, into)
}

// cacheFor returns the window holding t, evaluating it first if it is not
// already.
func (w *Windowed) cacheFor(ctx context.Context, t time.Time) (*RangeCache, error) {
	w.mu.Lock()
	c := w.cache
	if c == nil || t.Before(c.Start()) || t.After(c.End()) {
		if w.Progress != nil {
			w.Progress(t.Sub(w.start), w.end.Sub(w.start))
		}
		p := w.ahead
		w.ahead = nil
		if p == nil || !p.from.Equal(t) {
			p.stop()
			p = w.evaluate(ctx, t)
		}
		<-p.done
		if p.err != nil {
			w.mu.Unlock()
			return nil, p.err
		}
		c, w.cache = p.cache, p.cache
		if next := c.End().Add(w.step); !next.After(w.end) {
			w.ahead = w.evaluate(ctx, next)
		}
	}
	w.mu.Unlock()
	return c, nil
}

// evaluate starts evaluating the window from from.
func (w *Windowed) evaluate(ctx context.Context, from time.Time) *pending {
	if w.base != nil {
		ctx = w.base
	} else {
		ctx = context.WithoutCancel(ctx)
	}
	ctx, cancel := context.WithCancel(ctx)
	p := &pending{from: from, done: make(chan struct{}), cancel: cancel}
	last := from.Add(w.window - w.step)
	if last.After(w.end) {
		last = w.end
	}
	go func() {
		defer close(p.done)
		p.cache, p.err = NewRangeCache(ctx, w.api, w.queries, from, last, w.step)
	}()
	return p
}

// stop cancels the evaluation and waits for it to end.
func (p *pending) stop() {
	if p != nil {
		p.cancel()
		<-p.done
	}
}

// Close stops the evaluation of the window ahead, if any, and waits for
// it to end.
func (w *Windowed) Close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ahead.stop()
	w.ahead = nil
}

// RunStore replays b through pol as Run does, evaluating each signal
// once per window of DefaultWindow (range queries on the embedded engine)
// rather than once per tick; the ticks see the same vectors.
func RunStore(ctx context.Context, pol *evaluator.Policy, b *Store, progress func(done, total time.Duration), opts Options) (*Timeline, error) {
	step := pol.Config.Global.EvaluationInterval
	if step <= 0 {
		return nil, fmt.Errorf("evaluation_interval must be positive")
	}
	start := alignUp(b.Start(), step)
	queries := pol.Queries()
	w := NewWindowed(NewRecorder(b, queries, step), queries, start, b.End(), step, DefaultWindow)
	w.Progress = progress
	w.base = ctx
	defer w.Close()
	// The windows answer from memory: a tick's queries need neither a
	// goroutine nor a timer each. A window being evaluated holds them up
	// whatever their timeout, as before: Windowed waits for it in its own
	// context.
	return run(ctx, pol, w.QueryRoutes, true, start, b.End(), opts)
}
