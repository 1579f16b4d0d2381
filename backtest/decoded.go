package backtest

import (
	"sort"
	"sync"

	"github.com/prometheus/prometheus/tsdb/chunkenc"
)

// decodedWindow holds loaded series decoded once for every counter rate
// that records one range. Eleven of the shipped policy's rates read
// llm_gateway_requests_total, and the hour-long rate of the latency
// buckets reads an hour before each range: each rate decoded those chunks
// anew for every range. Now a series is decoded once per range, as far
// back as the rate reading it furthest needs, each rate takes its part,
// and the next range decodes only what the last one did not hold.
//
// Series are decoded on first use, by whichever recording asks first; the
// map is filled before the recordings run and only read while they do.
type decodedWindow struct {
	end     int64
	entries map[*chunkedSeries]*decodedSeries
}

// decodedSeries is one series' samples in (after, end], stale markers
// included, decoded once per range.
type decodedSeries struct {
	after   int64
	once    sync.Once
	samples []Sample
	ok      bool
	err     error
	// last is the series' entry of the window before, whose samples this
	// one keeps rather than decode them again.
	last *decodedSeries
	// end is the end of the window samples reach.
	end int64
}

// nextWindow returns an empty window ending at end, which will reuse what
// d (nil for none) decoded for the series asked for again.
func (d *decodedWindow) nextWindow(end int64) *decodedWindow {
	next := &decodedWindow{end: end, entries: map[*chunkedSeries]*decodedSeries{}}
	if d != nil && d.end < end {
		for s, e := range d.entries {
			next.entries[s] = &decodedSeries{after: end, last: e, end: end}
		}
	}
	return next
}

// want asks for the samples of s after after. It must not be called once
// samples has been.
func (d *decodedWindow) want(s *chunkedSeries, after int64) {
	e, ok := d.entries[s]
	if !ok {
		e = &decodedSeries{after: after, end: d.end}
		d.entries[s] = e
	}
	e.after = min(e.after, after)
}

// drop forgets the series carried from the window before that no rate
// of this one asked for.
func (d *decodedWindow) drop() {
	for s, e := range d.entries {
		if e.after == d.end {
			delete(d.entries, s)
		}
	}
}

// samples returns the samples of s in (after, end], stale markers
// included, as decodeSeries does; from the window if it holds them (d may
// be nil), else decoded now. ok is false if s holds other than floats.
func (d *decodedWindow) samples(s *chunkedSeries, after, end int64) ([]Sample, bool, error) {
	var e *decodedSeries
	if d != nil && d.end == end {
		e = d.entries[s]
	}
	if e == nil || e.after > after {
		return decodeSeries(nil, s, after, end)
	}
	e.once.Do(func() { e.fill(s) })
	if !e.ok || e.err != nil {
		return nil, e.ok, e.err
	}
	lo := sort.Search(len(e.samples), func(j int) bool { return e.samples[j].T > after })
	return e.samples[lo:], true, nil
}

// fill decodes the samples of s in (after, end], keeping those the
// window before decoded. The samples end in an array of their size: the
// window before's array when they fit there, as they do once the ranges
// are as long.
func (e *decodedSeries) fill(s *chunkedSeries) {
	last := e.last
	e.last = nil
	var array, kept []Sample
	from := e.after
	// The window before was filled: its range's recordings are done.
	if last != nil && last.ok && last.err == nil && last.after <= e.after {
		lo := sort.Search(len(last.samples), func(j int) bool { return last.samples[j].T > e.after })
		array, kept, from = last.samples, last.samples[lo:], max(last.end, e.after)
	}
	buf := scratch.Get().(*[]Sample)
	defer scratch.Put(buf)
	more, ok, err := decodeSeries((*buf)[:0], s, from, e.end)
	*buf = more[:0]
	if e.ok, e.err = ok, err; !ok || err != nil {
		return
	}
	if n := len(kept) + len(more); n > cap(array) {
		array = make([]Sample, 0, n)
	}
	array = array[:copy(array[:len(kept)], kept)]
	e.samples = append(array, more...)
}

// scratch holds the buffers series are decoded into before they are
// copied into arrays of their size.
var scratch = sync.Pool{New: func() any { return new([]Sample) }}

// decodeSeries appends to buf the samples of s in (after, end], stale
// markers included, read with the iterator the engine's selectors use
// (which drops a repeated timestamp); ok is false if s holds other than
// floats.
func decodeSeries(buf []Sample, s *chunkedSeries, after, end int64) ([]Sample, bool, error) {
	cs := s.overlapping(after, end)
	if len(cs) == 0 {
		return buf, true, nil
	}
	n := len(buf)
	for _, c := range cs {
		n += c.chunk.NumSamples()
	}
	if n > cap(buf) {
		buf = append(make([]Sample, 0, n), buf...)
	}
	it := chunkSeries{labels: s.labels, chunks: cs}.Iterator(nil)
	for vt := it.Next(); vt != chunkenc.ValNone; vt = it.Next() {
		if vt != chunkenc.ValFloat {
			return nil, false, nil
		}
		t, f := it.At()
		if t > after && t <= end {
			buf = append(buf, Sample{T: t, F: f})
		}
	}
	return buf, true, it.Err()
}
