package backtest

import (
	"slices"
	"sort"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
)

// samplesPerChunk is how many samples a chunk holds, as in Prometheus's
// TSDB head.
const samplesPerChunk = 120

// chunkedSeries is one loaded series, its samples compressed in XOR chunks
// as Prometheus's TSDB holds them: a regular series takes one or two bytes
// a sample instead of sixteen.
type chunkedSeries struct {
	labels labels.Labels
	chunks []timedChunk // in time order, not overlapping
}

// timedChunk is a chunk and the times of its first and last samples.
type timedChunk struct {
	minT, maxT int64
	chunk      chunkenc.Chunk
}

// compress encodes samples, in time order, in chunks.
func compress(lbls labels.Labels, samples []Sample) chunkedSeries {
	s := chunkedSeries{labels: lbls}
	for len(samples) > 0 {
		n := min(len(samples), samplesPerChunk)
		c := chunkenc.NewXORChunk()
		app, err := c.Appender()
		if err != nil {
			panic(err) // a new XOR chunk always has an appender
		}
		for _, p := range samples[:n] {
			app.Append(0, p.T, p.F)
		}
		// Keep the encoded bytes only, not the room the chunk grew into.
		compact, err := chunkenc.FromData(chunkenc.EncXOR, slices.Clone(c.Bytes()))
		if err != nil {
			panic(err) // bytes just encoded decode
		}
		s.chunks = append(s.chunks, timedChunk{minT: samples[0].T, maxT: samples[n-1].T, chunk: compact})
		samples = samples[n:]
	}
	return s
}

// overlapping returns the chunks of s that overlap [mint, maxt].
func (s *chunkedSeries) overlapping(mint, maxt int64) []timedChunk {
	lo := sort.Search(len(s.chunks), func(i int) bool { return s.chunks[i].maxT >= mint })
	hi := sort.Search(len(s.chunks), func(i int) bool { return s.chunks[i].minT > maxt })
	return s.chunks[lo:max(lo, hi)]
}

// chunkSeries is a storage.Series of some chunks of a series.
type chunkSeries struct {
	labels labels.Labels
	chunks []timedChunk // not empty
}

// Labels returns the series' labels.
func (s chunkSeries) Labels() labels.Labels { return s.labels }

// Iterator returns an iterator over the samples of the chunks, reusing it
// if it can. Like the TSDB's, it may return samples of the chunks outside
// the querier's time range; the engine reads only those its selectors ask
// for.
func (s chunkSeries) Iterator(it chunkenc.Iterator) chunkenc.Iterator {
	iterables := make([]chunkenc.Iterable, len(s.chunks))
	for i, c := range s.chunks {
		iterables[i] = c.chunk
	}
	return storage.ChainSampleIteratorFromIterables(it, iterables)
}
