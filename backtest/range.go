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
	// vectors holds the samples of each tick, the window's first tick
	// first (from, then every step).
	vectors []model.Vector
	// owners holds, beside each sample of vectors, the index in series
	// of the series it belongs to.
	owners [][]int32
	// series are the route and part labels of each series returned,
	// read once per range rather than at every tick (routes).
	series []seriesRoute
	from   time.Time
	step   time.Duration
	// failed holds the API errors of the chunks that failed.
	failed []failedChunk
}

// seriesRoute is what promapi.VectorRoutes reads of a series's labels:
// whether it has a route label, the route and the part.
type seriesRoute struct {
	route, part string
	ok          bool
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
	a := &rangeAnswer{vectors: make([]model.Vector, points), owners: make([][]int32, points), from: from, step: step}
	for first := 0; first < points; first += MaxRangePoints {
		last := min(first+MaxRangePoints, points) - 1
		r := v1.Range{Start: from.Add(time.Duration(first) * step), End: from.Add(time.Duration(last) * step), Step: step}
		if err := a.fetch(ctx, api, q, r, opts); err != nil {
			return nil, fmt.Errorf("range query %q from %s to %s: %w", q, r.Start.Format(time.RFC3339), r.End.Format(time.RFC3339), err)
		}
	}
	return a, nil
}

// fetch runs one chunk's range query and stores its samples by tick.
func (a *rangeAnswer) fetch(ctx context.Context, api RangeQuerier, q string, r v1.Range, opts []v1.Option) error {
	val, _, _, err := api.QueryRange(ctx, q, r, opts...)
	var apiErr *v1.Error
	if errors.As(err, &apiErr) && (apiErr.Type == v1.ErrBadData || apiErr.Type == v1.ErrExec) {
		a.failed = append(a.failed, failedChunk{start: r.Start.UnixMilli(), end: r.End.UnixMilli(), err: err})
		return nil
	}
	if err != nil {
		return err
	}
	m, ok := val.(model.Matrix)
	if !ok {
		return fmt.Errorf("range query returned %s, not a matrix", valueType(val))
	}
	for _, ss := range m {
		r, ok := ss.Metric[labelname.Route]
		owner := int32(len(a.series))
		a.series = append(a.series, seriesRoute{route: string(r), part: string(ss.Metric[rules.PartLabel]), ok: ok})
		// One allocation per series, not per sample.
		block := make([]model.Sample, len(ss.Values))
		for i, p := range ss.Values {
			k, ok := a.tick(int64(p.Timestamp))
			if !ok {
				continue // not a tick: no instant query asks for it
			}
			block[i] = model.Sample{Metric: ss.Metric, Value: p.Value, Timestamp: p.Timestamp}
			if a.vectors[k] == nil {
				// Room for every series at once, rather than growing
				// each tick's vector series by series.
				a.vectors[k] = make(model.Vector, 0, len(m))
				a.owners[k] = make([]int32, 0, len(m))
			}
			a.vectors[k] = append(a.vectors[k], &block[i])
			a.owners[k] = append(a.owners[k], owner)
		}
	}
	return nil
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
		if c >= 0 && c < len(a.vectors) && floorDiv(from+int64(c)*step, int64(time.Millisecond)) == t {
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
	return a.vectors[k], nil
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
	for j, s := range a.vectors[k] {
		if r := &a.series[a.owners[k][j]]; r.ok {
			into.Add(r.route, r.part, float64(s.Value))
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
