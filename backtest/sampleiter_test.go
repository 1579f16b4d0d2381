package backtest

import (
	"math/rand/v2"
	"testing"

	"github.com/prometheus/prometheus/model/histogram"
	"github.com/prometheus/prometheus/storage"
	"github.com/prometheus/prometheus/tsdb/chunkenc"
	"github.com/prometheus/prometheus/tsdb/chunks"
)

// listSample is a float chunks.Sample, for storage's list iterator.
type listSample struct{ s Sample }

func (l listSample) T() int64                    { return l.s.T }
func (listSample) ST() int64                     { return 0 }
func (l listSample) F() float64                  { return l.s.F }
func (listSample) H() *histogram.Histogram       { return nil }
func (listSample) FH() *histogram.FloatHistogram { return nil }
func (listSample) Type() chunkenc.ValueType      { return chunkenc.ValFloat }
func (l listSample) Copy() chunks.Sample         { return l }

// TestSampleIteratorLikeList drives sampleIterator and storage's list
// iterator over the same samples with the same random Next and Seek calls
// (the engine's MemoizedSeriesIterator makes both) and wants the same
// answers at every call, reusing both across series as the engine does.
func TestSampleIteratorLikeList(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var got chunkenc.Iterator
	for round := range 500 {
		samples := make([]Sample, rng.IntN(12))
		ref := make(chunks.SampleSlice, len(samples))
		ts := int64(rng.IntN(5))
		for i := range samples {
			ts += 1 + int64(rng.IntN(4))
			samples[i] = Sample{T: ts, F: rng.Float64()}
			ref[i] = listSample{samples[i]}
		}
		got = memSeries{samples: samples}.Iterator(got)
		want := storage.NewListSeriesIterator(ref)
		for call := range 20 {
			var g, w chunkenc.ValueType
			var op string
			if rng.IntN(2) == 0 {
				op = "Next"
				g, w = got.Next(), want.Next()
			} else {
				seek := int64(rng.IntN(int(ts) + 6))
				op = "Seek"
				g, w = got.Seek(seek), want.Seek(seek)
			}
			if g != w {
				t.Fatalf("round %d, call %d (%s) over %v: got %v, want %v", round, call, op, samples, g, w)
			}
			if w == chunkenc.ValNone {
				continue
			}
			gt, gf := got.At()
			wt, wf := want.At()
			if gt != wt || gf != wf || got.AtT() != want.AtT() || got.AtST() != want.AtST() {
				t.Fatalf("round %d, call %d (%s) over %v: at (%d, %v), want (%d, %v)", round, call, op, samples, gt, gf, wt, wf)
			}
		}
		if got.Err() != nil {
			t.Fatal(got.Err())
		}
	}
}
