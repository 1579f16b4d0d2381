package promapi

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/rules"
)

// TestCollectVolume: a signal's count arrives with its value; a shared
// count runs once; a failed count makes the signal an error, a missing
// one makes it missing.
func TestCollectVolume(t *testing.T) {
	var calls atomic.Int32
	query := func(_ context.Context, q string, _ time.Time) (model.Vector, error) {
		calls.Add(1)
		switch q {
		case "ratio":
			return model.Vector{sample(0.25, "route", "free"), sample(0.5, "route", "paid")}, nil
		case "calls[1m]":
			return model.Vector{sample(4, "route", "free")}, nil
		}
		return nil, errors.New("query timed out in expression evaluation")
	}
	signals := []rules.SignalConfig{
		{Name: "a", Query: "ratio", Volume: "calls[1m]"},
		{Name: "b", Query: "ratio", Volume: "calls[1m]"},
		{Name: "c", Query: "ratio", Samples: "broken"},
		{Name: "d", Query: "ratio"},
	}
	snap := Collect(context.Background(), query, signals, []string{"free", "paid"}, time.Unix(0, 0), 0)
	if n := calls.Load(); n != 3 {
		t.Errorf("%d queries, want 3 (ratio, calls, broken: each distinct query once)", n)
	}
	if s := snap.Get("free", "a"); s.Status != evaluator.StatusOK || !s.Counted || s.Volume != 4 || s.Value != 0.25 {
		t.Errorf("free.a = %+v, want 0.25 of 4 counted calls", s)
	}
	if s := snap.Get("paid", "b"); s.Status != evaluator.StatusMissing || s.Reason != "count: no data" {
		t.Errorf("paid.b = %+v, want missing: count: no data", s)
	}
	if s := snap.Get("free", "c"); s.Status != evaluator.StatusError || s.Reason != "count: timeout" {
		t.Errorf("free.c = %+v, want error: count: timeout", s)
	}
	if s := snap.Get("free", "d"); s.Status != evaluator.StatusOK || s.Counted {
		t.Errorf("free.d = %+v, want an uncounted value", s)
	}
}
