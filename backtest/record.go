package backtest

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/promql"
	"github.com/prometheus/prometheus/promql/parser"
	"github.com/prometheus/prometheus/storage"
)

// Recorder runs a backtest's range queries with the sub-expressions they
// share recorded once per step (see planRecordings), as a Prometheus with
// recording rules would: before the first query of a range it evaluates
// each recording over that range and stores it as series beside the
// loaded ones, with a stale marker where a series ends, so that a selector
// of the recording at a step returns exactly what the sub-expression
// returned there. Recordings are kept only as far back as the queries read
// them. Ranges must come in time order (as Windowed asks for them), at the
// step given to NewRecorder, starting at multiples of it since the epoch;
// other ranges, and every range after a recording failed, run as written.
// Its QueryRange method makes it a RangeQuerier.
type Recorder struct {
	b    *Store
	plan *recordingPlan
	step time.Duration
	// rates are, per recording, its counterRate where it is one, else nil,
	// and rateSeries the loaded series it reads (matchingSeries).
	rates      []*counterRate
	rateSeries [][]*chunkedSeries
	// natives are, per recording, its nativeAgg where it is one, else nil,
	// and the index of the recording it reads.
	natives   []*nativeAgg
	nativeSrc []int
	// queries are the rewritten queries evaluated natively, by query;
	// nativeRecs, per recording, its nativeQuery where it is one.
	queries    map[string]*nativeQuery
	nativeRecs []*nativeQuery

	// mu guards what follows: the first query of a range records it, the
	// others of that range wait and then read.
	mu sync.Mutex
	// first and next are, per recording, the first step recorded and
	// the first one not yet recorded (0 before the first range).
	first, next []int64
	// series are the recorded series, per recording, in label order.
	series [][]*recSeries
	// off is set once a recording failed: queries then run as written.
	off bool
	// decoded are the loaded series the counter rates of the last range
	// read.
	decoded *decodedWindow
	// scratch is, per recording, the memory its evaluations reuse from
	// one range to the next (only one goroutine evaluates a recording at
	// a time, and store copies the points).
	scratch []pointScratch
	// arenas hold the native evaluations' values between evaluations.
	arenas nqArenas
}

// recSeries is one recorded series.
type recSeries struct {
	labels  labels.Labels
	samples []Sample
}

// NewRecorder plans the recordings of queries evaluated on b at step.
func NewRecorder(b *Store, queries []string, step time.Duration) *Recorder {
	plan := planRecordings(queries, step, b.step)
	rates := splitCounterRates(plan, queries)
	splitNativeAggs(plan, queries, step, b.step)
	rates = append(rates, make([]*counterRate, len(plan.recs)-len(rates))...)
	rec := &Recorder{b: b, plan: plan, step: step, rates: rates, first: make([]int64, len(plan.recs)), next: make([]int64, len(plan.recs)), series: make([][]*recSeries, len(plan.recs)), scratch: make([]pointScratch, len(plan.recs))}
	rec.rateSeries = make([][]*chunkedSeries, len(rates))
	for i, c := range rates {
		if c != nil {
			rec.rateSeries[i] = matchingSeries(b.series, c.matchers)
		}
	}
	rec.natives, rec.nativeSrc = nativeAggs(plan)
	rec.queries = nativeQueries(plan, step)
	rec.nativeRecs = nativeRecordings(plan, step)
	return rec
}

// nativeRecordings returns, per recording of plan, the nativeQuery of its
// expression where it is one, else nil.
func nativeRecordings(plan *recordingPlan, step time.Duration) []*nativeQuery {
	ids := map[string]int{}
	for i, r := range plan.recs {
		ids[r.id] = i
	}
	out := make([]*nativeQuery, len(plan.recs))
	for i, r := range plan.recs {
		out[i], _ = compileNativeQuery(r.expr, ids, step)
	}
	return out
}

// nativeQueries returns the nativeQuery of each rewritten query of plan
// that is one.
func nativeQueries(plan *recordingPlan, step time.Duration) map[string]*nativeQuery {
	ids := map[string]int{}
	for i, r := range plan.recs {
		ids[r.id] = i
	}
	out := map[string]*nativeQuery{}
	for q, rw := range plan.rewrite {
		if nq, ok := compileNativeQuery(rw, ids, step); ok {
			out[q] = nq
		}
	}
	return out
}

// nativeAggs returns, per recording of plan, its nativeAgg where it is one
// and the index of the recording it reads.
func nativeAggs(plan *recordingPlan) ([]*nativeAgg, []int) {
	natives, srcs := make([]*nativeAgg, len(plan.recs)), make([]int, len(plan.recs))
	p := parser.NewParser(parser.Options{})
	for i, r := range plan.recs {
		e, err := p.ParseExpr(r.expr)
		if err != nil {
			continue
		}
		a, ok := nativeAggOf(e)
		if !ok {
			continue
		}
		if j := slices.IndexFunc(plan.recs, func(s *recording) bool { return s.id == a.src }); j >= 0 && plan.recs[j].level < r.level {
			natives[i], srcs[i] = a, j
		}
	}
	return natives, srcs
}

// QueryRange runs q over r, reading the recordings where q shares their
// sub-expressions; errors are typed as Store.QueryRange's.
func (rec *Recorder) QueryRange(ctx context.Context, q string, r v1.Range, _ ...v1.Option) (model.Value, v1.Warnings, v1.Infos, error) {
	var out model.Matrix
	err := rec.rangeMatrix(ctx, q, r, func(m promql.Matrix) (err error) {
		out, err = toModelMatrix(m)
		return err
	}, func(ss []nqSeries) error {
		out = stepsModelMatrix(ss, r)
		return nil
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return out, nil, nil, nil
}

// rangeMatrix is QueryRange handing the matrix to use, or the series
// evaluated natively to useSteps (matrixQuerier).
func (rec *Recorder) rangeMatrix(ctx context.Context, q string, r v1.Range, use func(promql.Matrix) error, useSteps func([]nqSeries) error) error {
	rw, ok := rec.plan.rewrite[q]
	if ok && rec.record(ctx, r) {
		if nq := rec.queries[q]; nq != nil {
			a := rec.arenas.get()
			defer rec.arenas.put(a)
			if ss, ok := nq.evaluateSteps(rec.series, r.Start.UnixMilli(), r.End.UnixMilli(), rec.step.Milliseconds(), a); ok {
				return useSteps(ss)
			}
		}
		q = rw
	}
	return rec.b.queryMatrix(ctx, rec, q, r, use)
}

// record makes sure every recording covers r, and says whether the
// queries may read them.
func (rec *Recorder) record(ctx context.Context, r v1.Range) bool {
	step := rec.step.Milliseconds()
	start, end := r.Start.UnixMilli(), r.End.UnixMilli()
	if r.Step != rec.step || start%step != 0 {
		return false
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.off {
		return false
	}
	dec := rec.decodeFor(start, end)
	// Level by level, the recordings of a level at once.
	errs := make([]error, len(rec.plan.recs))
	for level := 0; ; level++ {
		var wg sync.WaitGroup
		found := false
		for i, rc := range rec.plan.recs {
			if rc.level == level {
				found = true
				wg.Go(func() { errs[i] = rec.cover(ctx, i, dec, start, end) })
			}
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			rec.off = true
			return false
		}
		if !found {
			break
		}
	}
	return true
}

// decodeFor returns the loaded series that the counter rates recorded
// over [start, end] read, to be decoded once for all of them, keeping
// what the last range decoded.
func (rec *Recorder) decodeFor(start, end int64) *decodedWindow {
	if rec.decoded != nil && rec.decoded.end == end {
		return rec.decoded // the other queries of the range
	}
	dec := rec.decoded.nextWindow(end)
	for i, c := range rec.rates {
		if c == nil {
			continue
		}
		if _, from, _ := rec.span(i, start, end); from <= end {
			for _, s := range rec.rateSeries[i] {
				dec.want(s, from-c.rng)
			}
		}
	}
	dec.drop()
	rec.decoded = dec
	return dec
}

// span returns the first step the queries over [start, end] read of
// recording i, and the first step to record: past end if it is covered,
// first if it must start over (then restart is true).
func (rec *Recorder) span(i int, start, end int64) (first, from int64, restart bool) {
	step := rec.step.Milliseconds()
	first = start - rec.plan.recs[i].back.Milliseconds()
	first -= ((first % step) + step) % step
	from = rec.next[i]
	if from == 0 || first < rec.first[i] || first > from {
		// Not recorded yet, or not from first on: start over.
		return first, first, true
	}
	return first, from, false
}

// cover forgets what the queries over [start, end] no longer read of
// recording i, and records it as far as they read it, reading loaded
// series from dec.
func (rec *Recorder) cover(ctx context.Context, i int, dec *decodedWindow, start, end int64) error {
	step := rec.step.Milliseconds()
	first, from, restart := rec.span(i, start, end)
	if from > end && first == rec.first[i] {
		return nil // covered, and read by the other queries of the range
	}
	if restart {
		rec.series[i] = nil
	}
	// Forget first what the queries no longer read: no recording reads
	// itself, and the arrays then need room for what is kept and the new
	// range only, not for the range before as well (a third of the
	// recordings' memory at 100 routes).
	rec.trim(i, first-lookbackDelta.Milliseconds())
	if from <= end {
		if err := rec.evaluate(ctx, i, dec, from, end); err != nil {
			return err
		}
		rec.next[i] = end + step
	}
	rec.first[i] = first
	return nil
}

// evaluate records recording i over [from, end], reading loaded series
// from dec, and marks the series that ended as stale.
func (rec *Recorder) evaluate(ctx context.Context, i int, dec *decodedWindow, from, end int64) error {
	step := rec.step.Milliseconds()
	if c := rec.rates[i]; c != nil {
		m, ok, err := c.evaluate(ctx, rec.rateSeries[i], dec, from, end, step, &rec.scratch[i])
		if err != nil {
			return err
		}
		if ok {
			return rec.store(i, m, end)
		}
	}
	if a := rec.natives[i]; a != nil {
		if m, ok := a.evaluate(rec.series[rec.nativeSrc[i]], from, end, step, &rec.scratch[i]); ok {
			return rec.store(i, m, end)
		}
	}
	if q := rec.nativeRecs[i]; q != nil {
		a := rec.arenas.get()
		m, ok := q.evaluate(rec.series, from, end, step, a)
		rec.arenas.put(a)
		if ok {
			return rec.store(i, m, end)
		}
	}
	qry, err := rec.b.engine.NewRangeQuery(ctx, rec, nil, rec.plan.recs[i].expr, time.UnixMilli(from), time.UnixMilli(end), rec.step)
	if err != nil {
		return err
	}
	defer qry.Close()
	res := qry.Exec(ctx)
	if res.Err != nil {
		return res.Err
	}
	m, ok := res.Value.(promql.Matrix)
	if !ok {
		return fmt.Errorf("recording returned %s, not a matrix", res.Value.Type())
	}
	// Close hands the matrix back to the engine: store it before.
	return rec.store(i, m, end)
}

// store appends m, recording i evaluated up to end, to its series and
// marks the series that ended as stale. m and the recorded series are both
// in label order, so one walk through both pairs them.
func (rec *Recorder) store(i int, m promql.Matrix, end int64) error {
	step := rec.step.Milliseconds()
	stale := math.Float64frombits(value.StaleNaN)
	if !sort.IsSorted(m) {
		sort.Sort(m)
	}
	old := rec.series[i]
	merged := make([]*recSeries, 0, max(len(old), len(m)))
	o := 0
	for _, s := range m {
		if len(s.Histograms) > 0 {
			return fmt.Errorf("series %s: native histogram results are not supported", s.Metric)
		}
		for o < len(old) && labels.Compare(old[o].labels, s.Metric) < 0 {
			merged = append(merged, old[o])
			o++
		}
		var rs *recSeries
		if o < len(old) && labels.Equal(old[o].labels, s.Metric) {
			rs = old[o]
			o++
		} else {
			rs = &recSeries{labels: s.Metric}
		}
		merged = append(merged, rs)
		g := gaps(s.Floats, step)
		if need := len(rs.samples) + len(s.Floats) + g + 2; need > cap(rs.samples) {
			// Room for this range's samples and their stale markers,
			// exactly: trim keeps the array, so it is the series' size for
			// as long as the ranges are as long (cover trims before it
			// stores).
			rs.samples = append(make([]Sample, 0, need), rs.samples...)
		}
		pts := s.Floats
		if g == 0 && len(pts) > 0 {
			// No gap among the points (the usual case): only the first
			// may need a stale marker before it, and the rest are copied
			// as they are.
			rs.samples = appendPoint(rs.samples, pts[0], step, stale)
			for _, p := range pts[1:] {
				rs.samples = append(rs.samples, Sample(p))
			}
			pts = nil
		}
		for _, p := range pts {
			rs.samples = appendPoint(rs.samples, p, step, stale)
		}
	}
	merged = append(merged, old[o:]...)
	for _, rs := range merged {
		if n := len(rs.samples); n > 0 && !value.IsStaleNaN(rs.samples[n-1].F) && rs.samples[n-1].T < end {
			rs.samples = append(rs.samples, Sample{T: rs.samples[n-1].T + step, F: stale})
		}
	}
	rec.series[i] = merged
	return nil
}

// appendPoint appends p to the samples of a recorded series, after a
// stale marker a step after the last sample if p comes later and that is
// not one already.
func appendPoint(samples []Sample, p promql.FPoint, step int64, stale float64) []Sample {
	if n := len(samples); n > 0 && !value.IsStaleNaN(samples[n-1].F) && samples[n-1].T+step < p.T {
		samples = append(samples, Sample{T: samples[n-1].T + step, F: stale})
	}
	return append(samples, Sample(p))
}

// gaps counts the points of pts more than a step after the one before.
func gaps(pts []promql.FPoint, step int64) int {
	n := 0
	for j := 1; j < len(pts); j++ {
		if pts[j-1].T+step < pts[j].T {
			n++
		}
	}
	return n
}

// trim drops the samples of recording i before mint, and the series left
// without any. It moves the samples kept to the front of their array, so
// that the next range's samples fill the room the dropped ones leave.
func (rec *Recorder) trim(i int, mint int64) {
	rec.series[i] = slices.DeleteFunc(rec.series[i], func(s *recSeries) bool {
		lo := sort.Search(len(s.samples), func(j int) bool { return s.samples[j].T >= mint })
		s.samples = s.samples[:copy(s.samples, s.samples[lo:])]
		return len(s.samples) == 0
	})
}

// Querier makes a Recorder a storage.Queryable: the loaded series, and the
// recordings for selectors of recordingLabel.
func (rec *Recorder) Querier(mint, maxt int64) (storage.Querier, error) {
	q, err := rec.b.Querier(mint, maxt)
	if err != nil {
		return nil, err
	}
	return &recQuerier{Querier: q, rec: rec, mint: mint, maxt: maxt}, nil
}

// recQuerier answers selectors of a recording from it and any other from
// the loaded series.
type recQuerier struct {
	storage.Querier
	rec        *Recorder
	mint, maxt int64
}

// Select returns the recorded series of the recording a matcher of
// recordingLabel names, cut to the time range, or else the loaded series.
func (q *recQuerier) Select(ctx context.Context, sorted bool, hints *storage.SelectHints, ms ...*labels.Matcher) storage.SeriesSet {
	i := slices.IndexFunc(ms, func(m *labels.Matcher) bool { return m.Name == recordingLabel })
	if i < 0 {
		return q.Querier.Select(ctx, sorted, hints, ms...)
	}
	id, err := strconv.Atoi(ms[i].Value)
	if err != nil || id < 0 || id >= len(q.rec.series) {
		return storage.ErrSeriesSet(fmt.Errorf("no recording %q", ms[i].Value))
	}
	mint, maxt := q.mint, q.maxt
	if hints != nil {
		mint, maxt = max(mint, hints.Start), min(maxt, hints.End)
	}
	var out []storage.Series
	for _, s := range q.rec.series[id] {
		lo := sort.Search(len(s.samples), func(j int) bool { return s.samples[j].T >= mint })
		hi := sort.Search(len(s.samples), func(j int) bool { return s.samples[j].T > maxt })
		if lo < hi {
			out = append(out, memSeries{labels: s.labels, samples: s.samples[lo:hi]})
		}
	}
	return &seriesSet{series: out, i: -1}
}
