package promapi

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/rules"
)

// TestCollectVolume: a signal's count arrives with its value in the same
// query (its TickQuery); two signals of one query run it once; a failed
// query makes the signal an error, a missing count makes it missing.
func TestCollectVolume(t *testing.T) {
	signals := []rules.SignalConfig{
		{Name: "a", Query: "ratio", Volume: "calls[1m]"},
		{Name: "b", Query: "ratio", Volume: "calls[1m]"},
		{Name: "c", Query: "ratio", Samples: "broken"},
		{Name: "d", Query: "ratio"},
	}
	part := func(s *model.Sample, p string) *model.Sample {
		s.Metric[rules.PartLabel] = model.LabelValue(p)
		return s
	}
	var calls atomic.Int32
	query := func(_ context.Context, q string, _ time.Time) (model.Vector, error) {
		calls.Add(1)
		switch q {
		case signals[0].TickQuery():
			return model.Vector{
				part(sample(0.25, "route", "free"), rules.PartValue),
				part(sample(0.5, "route", "paid"), rules.PartValue),
				part(sample(4, "route", "free"), rules.PartEvidence),
			}, nil
		case signals[3].TickQuery():
			return model.Vector{sample(0.25, "route", "free")}, nil
		}
		return nil, errors.New("query timed out in expression evaluation")
	}
	snap := collect(context.Background(), query, signals, []string{"free", "paid"}, time.Unix(0, 0), 0)
	if n := calls.Load(); n != 3 {
		t.Errorf("%d queries, want 3 (a and b share one)", n)
	}
	if s := snap.Get("free", "a"); s.Status != evaluator.StatusOK || !s.Counted || s.Volume != 4 || s.Value != 0.25 {
		t.Errorf("free.a = %+v, want 0.25 of 4 counted calls", s)
	}
	if s := snap.Get("paid", "b"); s.Status != evaluator.StatusMissing || s.Reason != "count: no data" {
		t.Errorf("paid.b = %+v, want missing: count: no data", s)
	}
	if s := snap.Get("free", "c"); s.Status != evaluator.StatusError || s.Reason != "timeout" {
		t.Errorf("free.c = %+v, want error: timeout", s)
	}
	if s := snap.Get("free", "d"); s.Status != evaluator.StatusOK || s.Counted {
		t.Errorf("free.d = %+v, want an uncounted value", s)
	}
}

// TestCollectNoCalls: a ratio without a value (0/0 is NaN) beside a count
// of 0 is a route whose counters are there and flat: missing, counted, of
// volume 0 (the core's idle), not missing data; without its count it stays
// missing data.
func TestCollectNoCalls(t *testing.T) {
	signals := []rules.SignalConfig{{Name: "a", Query: "ratio", Volume: "calls[1m]"}}
	part := func(s *model.Sample, p string) *model.Sample {
		s.Metric[rules.PartLabel] = model.LabelValue(p)
		return s
	}
	query := func(_ context.Context, q string, _ time.Time) (model.Vector, error) {
		return model.Vector{
			part(sample(math.NaN(), "route", "free"), rules.PartValue),
			part(sample(0, "route", "free"), rules.PartEvidence),
			part(sample(math.NaN(), "route", "paid"), rules.PartValue),
		}, nil
	}
	snap := collect(context.Background(), query, signals, []string{"free", "paid"}, time.Unix(0, 0), 0)
	if s := snap.Get("free", "a"); s.Status != evaluator.StatusMissing || !s.Counted || s.Volume != 0 || s.Reason != NoCalls {
		t.Errorf("free.a = %+v, want missing, counted, volume 0, %q", s, NoCalls)
	}
	if s := snap.Get("paid", "a"); s.Status != evaluator.StatusMissing || s.Counted || s.Reason != "NaN" {
		t.Errorf("paid.a = %+v, want missing data (NaN), not counted", s)
	}
}
