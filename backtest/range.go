package backtest

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"

	"github.com/hermes-failover/hermes/labelname"
	"github.com/hermes-failover/hermes/promapi"
	"github.com/hermes-failover/hermes/rules"
)

// MaxRangePoints is the most points Prometheus answers for one range query.
const MaxRangePoints = 11000

// RangeQuerier runs range queries; client_golang's v1.API is one. It must
// be safe for concurrent use: NewRangeCache runs queries at once.
type RangeQuerier interface {
	QueryRange(ctx context.Context, query string, r v1.Range, opts ...v1.Option) (model.Value, v1.Warnings, v1.Infos, error)
}

// RangeCache replays a real Prometheus over a window: it fetches each query
// once as range queries and answers instant queries at the window's ticks
// from memory. Its Query method is an promapi.QueryFunc.
type RangeCache struct {
	from, to time.Time
	step     time.Duration
	answers  map[string]*rangeAnswer
}

// rangeAnswer is one query's cached result.
type rangeAnswer struct {
	// ticks holds the samples of each tick, the window's first tick first
	// (from, then every step): its value and the series it belongs to.
	// Query makes them a model.Vector when asked; the ticks of RunStore
	// read them as they are (QueryRoutes).
	ticks [][]tickSample
	// series are the series returned, with their route and part read once
	// per range rather than at every tick.
	series []seriesRoute
	// metrics makes the model.Metric of the series that came as the
	// engine's labels, once, on Query's first call.
	metrics sync.Once
	from    time.Time
	step    time.Duration
	// failed holds the API errors of the chunks that failed.
	failed []failedChunk
}

// tickSample is one sample of a tick: its value and the index in series
// of its series.
type tickSample struct {
	series int32
	v      float64
}

// seriesRoute is one series of an answer: what promapi.VectorRoutes reads
// of its labels (whether it has a route label, the route and the part),
// and its labels, as the engine gave them or as the client's model.
type seriesRoute struct {
	route, part string
	ok          bool
	labels      labels.Labels
	metric      model.Metric
}

// failedChunk is a part of the window whose range query returned an error.
type failedChunk struct {
	start, end int64 // milliseconds, inclusive
	err        error
}

// NewRangeCache runs one range query per distinct query over [from, to] at
// step, split into chunks of at most MaxRangePoints points, and caches the
// resulting matrices. It runs up to GOMAXPROCS queries at once. opts go with every request (e.g. v1.WithTimeout).
//
// A query that Prometheus rejects or fails to evaluate (a *v1.Error of type
// bad_data or execution) is not fatal: its ticks answer with that error, as
// the live source would have. Any other error (connection, timeout,
// server error, a result that is not a matrix) aborts.
func NewRangeCache(ctx context.Context, api RangeQuerier, queries []string, from, to time.Time, step time.Duration, opts ...v1.Option) (*RangeCache, error) {
	if step < time.Millisecond {
		return nil, fmt.Errorf("range cache: step must be at least 1ms, got %s", step)
	}
	if to.Before(from) {
		return nil, fmt.Errorf("range cache: end %s is before start %s", to.Format(time.RFC3339), from.Format(time.RFC3339))
	}
	c := &RangeCache{from: from, to: to, step: step, answers: map[string]*rangeAnswer{}}
	points := int(to.Sub(from)/step) + 1
	var distinct []string
	for _, q := range queries {
		if _, dup := c.answers[q]; !dup {
			c.answers[q] = nil
			distinct = append(distinct, q)
		}
	}
	// The queries are independent: run as many at once as there are
	// cores, and report the first failure in query order.
	answers := make([]*rangeAnswer, len(distinct))
	errs := make([]error, len(distinct))
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	var wg sync.WaitGroup
	for i, q := range distinct {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			answers[i], errs[i] = fetchAll(ctx, api, q, from, step, points, opts)
		})
	}
	wg.Wait()
	for i, q := range distinct {
		if errs[i] != nil {
			return nil, errs[i]
		}
		c.answers[q] = answers[i]
	}
	return c, nil
}

// fetchAll runs q over points steps from from, in chunks of at most
// MaxRangePoints points.
func fetchAll(ctx context.Context, api RangeQuerier, q string, from time.Time, step time.Duration, points int, opts []v1.Option) (*rangeAnswer, error) {
	a := &rangeAnswer{ticks: make([][]tickSample, points), from: from, step: step}
	for first := 0; first < points; first += MaxRangePoints {
		last := min(first+MaxRangePoints, points) - 1
		r := v1.Range{Start: from.Add(time.Duration(first) * step), End: from.Add(time.Duration(last) * step), Step: step}
		if err := a.fetch(ctx, api, q, r, opts); err != nil {
			return nil, fmt.Errorf("range query %q from %s to %s: %w", q, r.Start.Format(time.RFC3339), r.End.Format(time.RFC3339), err)
		}
	}
	return a, nil
}

// matrixQuerier is a RangeQuerier (Store, Recorder) that can hand over
// the engine's matrix as it is, for fetch to read before the query is
// closed, rather than converted to the client's model (a map of labels per
// series and a copy of every point, a tenth of what a 100-route backtest
// allocated). Its errors are QueryRange's.
//
// Where it evaluates q itself (a nativeQuery), it hands over the series
// with their values at every step of r instead, which fetch lays out by
// tick as they are: building the matrix and then finding each point's tick
// again cost a tenth of what a 100-route backtest spent outside the core
// and allocated a sixth of its bytes.
type matrixQuerier interface {
	rangeMatrix(ctx context.Context, q string, r v1.Range, use func(promql.Matrix) error, useSteps func([]nqSeries) error) error
}

// fetch runs one chunk's range query and stores its samples by tick.
func (a *rangeAnswer) fetch(ctx context.Context, api RangeQuerier, q string, r v1.Range, opts []v1.Option) error {
	var err error
	if mq, ok := api.(matrixQuerier); ok {
		err = mq.rangeMatrix(ctx, q, r, a.addMatrix, func(ss []nqSeries) error {
			a.addSteps(r.Start.UnixMilli(), r.Step.Milliseconds(), ss)
			return nil
		})
	} else {
		var val model.Value
		if val, _, _, err = api.QueryRange(ctx, q, r, opts...); err == nil {
			m, ok := val.(model.Matrix)
			if !ok {
				return fmt.Errorf("range query returned %s, not a matrix", valueType(val))
			}
			a.addModel(m)
		}
	}
	var apiErr *v1.Error
	if errors.As(err, &apiErr) && (apiErr.Type == v1.ErrBadData || apiErr.Type == v1.ErrExec) {
		a.failed = append(a.failed, failedChunk{start: r.Start.UnixMilli(), end: r.End.UnixMilli(), err: err})
		return nil
	}
	return err
}

// addModel stores the samples of a client's matrix by tick.
func (a *rangeAnswer) addModel(m model.Matrix) {
	for _, ss := range m {
		r, ok := ss.Metric[labelname.Route]
		a.series = append(a.series, seriesRoute{route: string(r), part: string(ss.Metric[rules.PartLabel]), ok: ok, metric: ss.Metric})
		for _, p := range ss.Values {
			a.add(int64(p.Timestamp), float64(p.Value), len(m))
		}
	}
}

// addMatrix stores the samples of an engine's matrix by tick, as
// addModel stores them once toModelMatrix has converted it.
func (a *rangeAnswer) addMatrix(m promql.Matrix) error {
	for _, s := range m {
		if len(s.Histograms) > 0 {
			return fmt.Errorf("series %s: native histogram results are not supported", s.Metric)
		}
		a.series = append(a.series, seriesRoute{route: s.Metric.Get(labelname.Route), part: s.Metric.Get(rules.PartLabel), ok: s.Metric.Has(labelname.Route), labels: s.Metric})
		for _, p := range s.Floats {
			a.add(p.T, p.F, len(m))
		}
	}
	return nil
}

// addSteps stores the samples of series with their values at every step
// (milliseconds) from start on (nativeQuery.evaluateSteps), as addMatrix
// stores those of the matrix they make: each tick's samples in series
// order, all of them in one block.
func (a *rangeAnswer) addSteps(start, step int64, ss []nqSeries) {
	base := int32(len(a.series))
	total := 0
	for _, s := range ss {
		a.series = append(a.series, seriesRoute{route: s.labels.Get(labelname.Route), part: s.labels.Get(rules.PartLabel), ok: s.labels.Has(labelname.Route), labels: s.labels})
		for _, h := range s.has {
			if h {
				total++
			}
		}
	}
	if len(ss) == 0 {
		return
	}
	block := make([]tickSample, 0, total)
	for j := range ss[0].has {
		k, ok := a.tick(start + int64(j)*step)
		if !ok {
			continue
		}
		lo := len(block)
		for i, s := range ss {
			if s.has[j] {
				block = append(block, tickSample{series: base + int32(i), v: s.vals[j]})
			}
		}
		if len(block) > lo {
			a.ticks[k] = block[lo:len(block):len(block)]
		}
	}
}

// add stores the sample of the last series at t (milliseconds) of value v
// if t is a tick; no instant query asks for the others. n is the number
// of series the range returned: room for them all at once, rather than
// growing each tick's samples series by series.
func (a *rangeAnswer) add(t int64, v float64, n int) {
	k, ok := a.tick(t)
	if !ok {
		return
	}
	if a.ticks[k] == nil {
		a.ticks[k] = make([]tickSample, 0, n)
	}
	a.ticks[k] = append(a.ticks[k], tickSample{series: int32(len(a.series) - 1), v: v})
}

// vector returns tick k's samples as a model.Vector, as the range queries
// returned them: every sample of a tick is at its millisecond.
func (a *rangeAnswer) vector(k int) model.Vector {
	pts := a.ticks[k]
	if pts == nil {
		return nil
	}
	a.metrics.Do(func() {
		for i := range a.series {
			if s := &a.series[i]; s.metric == nil {
				s.metric = make(model.Metric, s.labels.Len())
				s.labels.Range(func(l labels.Label) { s.metric[model.LabelName(l.Name)] = model.LabelValue(l.Value) })
			}
		}
	})
	ts := model.Time(floorDiv(a.from.UnixNano()+int64(k)*int64(a.step), int64(time.Millisecond)))
	// One allocation for the samples, not one per sample.
	block := make([]model.Sample, len(pts))
	vec := make(model.Vector, len(pts))
	for j, p := range pts {
		block[j] = model.Sample{Metric: a.series[p.series].metric, Value: model.SampleValue(p.v), Timestamp: ts}
		vec[j] = &block[j]
	}
	return vec
}

// tick returns the index in vectors of the tick whose time in
// milliseconds (as Query reads it) is t, ok false if none is. Ticks are at
// least a millisecond apart, so at most one is.
//
// It is time.UnixMilli(t).Sub(from) / step and from.Add(c * step).UnixMilli()
// in integer nanoseconds: it runs for every sample of every range query
// of a backtest, and the time.Time arithmetic was a quarter of fetching
// the answers.
func (a *rangeAnswer) tick(t int64) (int, bool) {
	from, step := a.from.UnixNano(), int64(a.step)
	k := int((t*int64(time.Millisecond) - from) / step)
	for _, c := range [2]int{k, k + 1} {
		if c >= 0 && c < len(a.ticks) && floorDiv(from+int64(c)*step, int64(time.Millisecond)) == t {
			return c, true
		}
	}
	return 0, false
}

// floorDiv is a / b rounded down (b > 0), as time.Time.UnixMilli rounds
// before 1970 too.
func floorDiv(a, b int64) int64 {
	q := a / b
	if a%b != 0 && a < 0 {
		q--
	}
	return q
}

// valueType names the type of a query result.
func valueType(v model.Value) string {
	if v == nil {
		return "nothing"
	}
	return v.Type().String()
}

// Query answers the instant query q at tick t from the cache: the samples
// the range queries returned at exactly t (an empty vector if none), or the
// error its chunk returned. t must be from + k×step within the window and q
// one of the fetched queries. The returned vector must not be modified.
func (c *RangeCache) Query(_ context.Context, q string, t time.Time) (model.Vector, error) {
	a, k, err := c.at(q, t)
	if err != nil {
		return nil, err
	}
	return a.vector(k), nil
}

// QueryRoutes is Query as a promapi.RouteQueryFunc: it adds to into what
// promapi.VectorRoutes(c.Query) adds, in the same order, with each
// series's route and part read once per range instead of from its labels
// at every tick (a third of what the ticks of a 100-route backtest spent
// outside the core).
func (c *RangeCache) QueryRoutes(_ context.Context, q string, t time.Time, into *promapi.Answer) error {
	a, k, err := c.at(q, t)
	if err != nil {
		return err
	}
	for _, p := range a.ticks[k] {
		if r := &a.series[p.series]; r.ok {
			into.Add(r.route, r.part, p.v)
		}
	}
	return nil
}

// at returns the answer of q and the index of tick t in it, or the error
// Query returns.
func (c *RangeCache) at(q string, t time.Time) (*rangeAnswer, int, error) {
	a, ok := c.answers[q]
	if !ok {
		return nil, 0, fmt.Errorf("range cache: query %q was not fetched", q)
	}
	if t.Before(c.from) || t.After(c.to) || t.Sub(c.from)%c.step != 0 {
		return nil, 0, fmt.Errorf("range cache: %s is not a tick between %s and %s every %s",
			t.Format(time.RFC3339Nano), c.from.Format(time.RFC3339), c.to.Format(time.RFC3339), c.step)
	}
	ms := t.UnixMilli()
	for _, f := range a.failed {
		if ms >= f.start && ms <= f.end {
			return nil, 0, f.err
		}
	}
	return a, int(t.Sub(c.from) / c.step), nil
}

// Start is the first tick of the window.
func (c *RangeCache) Start() time.Time { return c.from }

// End is the last tick of the window: the last from + k×step not after to.
func (c *RangeCache) End() time.Time { return c.from.Add(c.to.Sub(c.from) / c.step * c.step) }

// Step is the interval between two ticks.
func (c *RangeCache) Step() time.Duration { return c.step }
