package backtest

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/util/annotations"

	"github.com/hermes-failover/hermes/labelname"
)

// Engine limits of a backtest, close to a default Prometheus server's.
const (
	maxSamples    = 50_000_000
	queryTimeout  = time.Minute
	lookbackDelta = 5 * time.Minute
)

// Store is a File held in memory behind the real PromQL engine. Its Query
// method is an promapi.QueryFunc.
//
// The series live in a small read-only storage.Queryable rather than a TSDB:
// package tsdb imports Prometheus's config package and with it the cloud
// SDKs of remote write, which a backtest has no use for. Their samples are
// compressed in the TSDB's own chunks (see chunks.go), and the engine sees
// the same samples, stale markers included, that a TSDB would return.
type Store struct {
	series     []chunkedSeries // sorted by labels
	engine     *promql.Engine
	start, end time.Time
	step       time.Duration
}

// Open loads every series of f. The series must have distinct label sets and
// samples in time order, as Parse returns them.
func Open(f *File) (*Store, error) {
	if f == nil || len(f.Series) == 0 {
		return nil, errors.New("opening backtest: no series")
	}
	var l loader
	for _, s := range f.Series {
		if err := l.add(s); err != nil {
			return nil, err
		}
	}
	return l.open(f.Interval)
}

// loader compresses series one at a time, so that a series file need not
// be held expanded in memory.
type loader struct {
	series      []chunkedSeries
	first, last int64
	found       bool
}

// add checks and compresses s.
func (l *loader) add(s Series) error { return l.keep(prepare(s)) }

// prepared is a series checked and compressed, not yet added: prepare
// needs no loader, so that OpenFile compresses on several cores.
type prepared struct {
	series      chunkedSeries
	first, last int64 // the times of the first and last samples
	samples     bool  // whether there are samples
	err         error
}

// prepare checks and compresses s.
func prepare(s Series) prepared {
	if !slices.IsSortedFunc(s.Samples, func(x, y Sample) int { return cmp.Compare(x.T, y.T) }) {
		return prepared{err: fmt.Errorf("opening backtest: series %s: samples out of time order", s.Labels)}
	}
	p := prepared{series: compress(s.Labels, s.Samples)}
	if n := len(s.Samples); n > 0 {
		p.first, p.last, p.samples = s.Samples[0].T, s.Samples[n-1].T, true
	}
	return p
}

// keep adds the prepared series p.
func (l *loader) keep(p prepared) error {
	if p.err != nil {
		return p.err
	}
	if p.samples {
		if !l.found || p.first < l.first {
			l.first = p.first
		}
		if !l.found || p.last > l.last {
			l.last = p.last
		}
		l.found = true
	}
	l.series = append(l.series, p.series)
	return nil
}

// open makes a Store of the series added, interval apart.
func (l *loader) open(interval time.Duration) (*Store, error) {
	if interval <= 0 {
		return nil, fmt.Errorf("opening backtest: interval must be positive, got %s", interval)
	}
	b := &Store{series: l.series, step: interval}
	slices.SortStableFunc(b.series, func(x, y chunkedSeries) int { return labels.Compare(x.labels, y.labels) })
	for i := 1; i < len(b.series); i++ {
		if labels.Equal(b.series[i].labels, b.series[i-1].labels) {
			return nil, fmt.Errorf("opening backtest: series %s given twice", b.series[i].labels)
		}
	}
	if !l.found {
		return nil, errors.New("opening backtest: no samples")
	}
	b.start, b.end = time.UnixMilli(l.first).UTC(), time.UnixMilli(l.last).UTC()

	step := interval.Milliseconds()
	b.engine = promql.NewEngine(promql.EngineOpts{
		MaxSamples:    maxSamples,
		Timeout:       queryTimeout,
		LookbackDelta: lookbackDelta,
		// Subqueries without a step use the series interval, as promtool
		// uses the evaluation interval.
		NoStepSubqueryIntervalFn: func(int64) int64 { return step },
		EnableAtModifier:         true,
		EnableNegativeOffset:     true,
	})
	return b, nil
}

// OpenFile parses the series file at path and opens it for queries,
// compressing each series as it is read: memory holds the file's text
// and the compressed samples, never all of them expanded.
func OpenFile(path string) (*Store, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading series file: %w", err)
	}
	var l loader
	interval, err := parse(data, prepare, l.keep)
	var b *Store
	if err == nil {
		b, err = l.open(interval)
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// Close releases the Store. It exists so that a future on-disk storage
// needs no change of the callers; today it only drops the series.
func (b *Store) Close() error {
	b.series = nil
	return nil
}

// Start is the time of the earliest sample.
func (b *Store) Start() time.Time { return b.start }

// End is the time of the latest sample.
func (b *Store) End() time.Time { return b.end }

// Step is the file's interval between two values of a series.
func (b *Store) Step() time.Duration { return b.step }

// Query runs the instant query q at t on the loaded series. Its errors are
// *v1.Error typed the way the Prometheus HTTP API types them ("bad_data",
// "execution", "timeout", "canceled"), so a backtest classifies them as the
// live source would; a result that is not an instant vector is an error.
func (b *Store) Query(ctx context.Context, q string, t time.Time) (model.Vector, error) {
	qry, err := b.engine.NewInstantQuery(ctx, b, nil, q, t)
	if err != nil {
		return nil, &v1.Error{Type: v1.ErrBadData, Msg: err.Error()}
	}
	defer qry.Close()
	res := qry.Exec(ctx)
	if res.Err != nil {
		return nil, execError(res.Err)
	}
	vec, ok := res.Value.(promql.Vector)
	if !ok {
		return nil, fmt.Errorf("query must return an instant vector, got %s", res.Value.Type())
	}
	return toModelVector(vec)
}

// execError types an evaluation error as the Prometheus API does.
func execError(err error) error {
	var timeout promql.ErrQueryTimeout
	var canceled promql.ErrQueryCanceled
	typ := v1.ErrExec
	switch {
	case errors.As(err, &timeout):
		typ = v1.ErrTimeout
	case errors.As(err, &canceled), errors.Is(err, context.Canceled):
		typ = v1.ErrCanceled
	}
	return &v1.Error{Type: typ, Msg: err.Error()}
}

// toModelVector converts an engine vector to the client's representation.
func toModelVector(vec promql.Vector) (model.Vector, error) {
	out := make(model.Vector, 0, len(vec))
	for _, s := range vec {
		if s.H != nil {
			return nil, fmt.Errorf("series %s: native histogram results are not supported", s.Metric)
		}
		m := make(model.Metric, s.Metric.Len())
		s.Metric.Range(func(l labels.Label) {
			m[model.LabelName(l.Name)] = model.LabelValue(l.Value)
		})
		out = append(out, &model.Sample{Metric: m, Value: model.SampleValue(s.F), Timestamp: model.Time(s.T)})
	}
	return out, nil
}

// Querier makes a Store a storage.Queryable: it reads the samples in [mint, maxt].
func (b *Store) Querier(mint, maxt int64) (storage.Querier, error) {
	return &querier{series: b.series, mint: mint, maxt: maxt}, nil
}

// querier selects series of a Store within a time range.
type querier struct {
	series     []chunkedSeries
	mint, maxt int64
}

// matching returns the series whose labels satisfy every matcher, in label order.
func (q *querier) matching(ms []*labels.Matcher) []*chunkedSeries {
	return matchingSeries(q.series, ms)
}

// matchingSeries returns the series whose labels satisfy every matcher,
// in their order in series (label order in a Store).
func matchingSeries(series []chunkedSeries, ms []*labels.Matcher) []*chunkedSeries {
	var out []*chunkedSeries
	for i := range series {
		s := &series[i]
		ok := true
		for _, m := range ms {
			if !m.Matches(s.labels.Get(m.Name)) {
				ok = false
				break
			}
		}
		if ok {
			out = append(out, s)
		}
	}
	return out
}

// Select returns the matching series, cut to the querier's time range.
func (q *querier) Select(_ context.Context, _ bool, hints *storage.SelectHints, ms ...*labels.Matcher) storage.SeriesSet {
	mint, maxt := q.mint, q.maxt
	if hints != nil {
		mint, maxt = max(mint, hints.Start), min(maxt, hints.End)
	}
	var out []storage.Series
	for _, s := range q.matching(ms) {
		if cs := s.overlapping(mint, maxt); len(cs) > 0 {
			out = append(out, chunkSeries{labels: s.labels, chunks: cs})
		}
	}
	return &seriesSet{series: out, i: -1}
}

// LabelValues returns the sorted values of name among the matching series.
func (q *querier) LabelValues(_ context.Context, name string, hints *storage.LabelHints, ms ...*labels.Matcher) ([]string, annotations.Annotations, error) {
	var vals []string
	for _, s := range q.matching(ms) {
		if v := s.labels.Get(name); v != "" {
			vals = append(vals, v)
		}
	}
	return limit(vals, hints), nil, nil
}

// LabelNames returns the sorted label names of the matching series.
func (q *querier) LabelNames(_ context.Context, hints *storage.LabelHints, ms ...*labels.Matcher) ([]string, annotations.Annotations, error) {
	var names []string
	for _, s := range q.matching(ms) {
		s.labels.Range(func(l labels.Label) { names = append(names, l.Name) })
	}
	return limit(names, hints), nil, nil
}

// Close does nothing: the series stay with the Store.
func (*querier) Close() error { return nil }

// limit sorts and deduplicates ss and keeps at most hints.Limit of them.
func limit(ss []string, hints *storage.LabelHints) []string {
	slices.Sort(ss)
	ss = slices.Compact(ss)
	if hints != nil && hints.Limit > 0 && len(ss) > hints.Limit {
		ss = ss[:hints.Limit]
	}
	return ss
}

// seriesSet iterates over a slice of series.
type seriesSet struct {
	series []storage.Series
	i      int
}

// Next moves to the next series.
func (s *seriesSet) Next() bool { s.i++; return s.i < len(s.series) }

// At returns the current series.
func (s *seriesSet) At() storage.Series { return s.series[s.i] }

// Err is always nil.
func (*seriesSet) Err() error { return nil }

// Warnings is always empty.
func (*seriesSet) Warnings() annotations.Annotations { return nil }

// memSeries is one series' samples in a time range.
type memSeries struct {
	labels  labels.Labels
	samples []Sample
}

// Labels returns the series' labels.
func (s memSeries) Labels() labels.Labels { return s.labels }

// Iterator returns an iterator over the samples, reusing it if it can.
func (s memSeries) Iterator(it chunkenc.Iterator) chunkenc.Iterator {
	if r, ok := it.(*sampleIterator); ok {
		r.reset(s.samples)
		return r
	}
	return &sampleIterator{samples: s.samples, i: -1}
}

// Routes returns the sorted values of the route label among the series:
// the routes the history speaks of.
func (b *Store) Routes() []string {
	var out []string
	for _, s := range b.series {
		if v := s.labels.Get(labelname.Route); v != "" {
			out = append(out, v)
		}
	}
	return limit(out, nil)
}
