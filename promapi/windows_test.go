package promapi

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/labelname"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
)

// TestAnswerWindowParts: the parts of a signal's windows are no second
// value; they fill the snapshot's window columns ("a@15m") as counted
// samples with their calls. A window without data, or part of one, is a
// missing window sample and leaves the signal's own as it is; a part of a
// window the signal does not declare is ignored.
func TestAnswerWindowParts(t *testing.T) {
	sig := rules.SignalConfig{Name: "a", Query: "sum by (route) (rate(x_total{v=\"bad\"}[1m]))", Volume: "sum by (route) (increase(x_total[1m]))",
		Windows: []time.Duration{5 * time.Minute, 15 * time.Minute}}
	sig = config.DeriveSignals([]rules.SignalConfig{sig})[0]
	part := func(v float64, route, p string) *model.Sample {
		return &model.Sample{Metric: model.Metric{labelname.Route: model.LabelValue(route), rules.PartLabel: model.LabelValue(p)}, Value: model.SampleValue(v)}
	}
	query := func(_ context.Context, q string, _ time.Time) (model.Vector, error) {
		if q != sig.TickQuery() {
			t.Errorf("query %q, want the signal's one TickQuery", q)
		}
		return model.Vector{
			part(0.1, "free", rules.PartValue), part(120, "free", rules.PartEvidence),
			part(0.05, "free", "value_15m"), part(1800, "free", "evidence_15m"),
			part(0.2, "free", "value_1h"), part(7200, "free", "evidence_1h"),
			part(0, "paid", rules.PartValue), part(30, "paid", rules.PartEvidence),
			part(0, "paid", "value_5m"), // its count is missing
		}, nil
	}
	snap := collect(context.Background(), query, []rules.SignalConfig{sig}, []string{"free", "paid"}, time.Unix(0, 0), 0)
	if got := snap.Signals(); len(got) != 3 || got[1] != "a@5m" || got[2] != "a@15m" {
		t.Fatalf("columns %v, want a, a@5m, a@15m", got)
	}
	if s := snap.Get("free", "a"); s.Status != evaluator.StatusOK || s.Value != 0.1 || s.Volume != 120 || !s.Counted {
		t.Errorf("free.a = %+v, want 0.1 of 120 calls", s)
	}
	if s := snap.Get("free", "a@15m"); s.Status != evaluator.StatusOK || s.Value != 0.05 || s.Volume != 1800 || !s.Counted {
		t.Errorf("free.a@15m = %+v, want 0.05 of 1800 calls", s)
	}
	if s := snap.Get("free", "a@5m"); s.Status != evaluator.StatusMissing {
		t.Errorf("free.a@5m = %+v, want missing", s)
	}
	if s := snap.Get("paid", "a"); s.Status != evaluator.StatusOK || s.Volume != 30 {
		t.Errorf("paid.a = %+v, want 0 of 30 calls", s)
	}
	if s := snap.Get("paid", "a@5m"); s.Status != evaluator.StatusMissing || s.Reason != "count: no data" {
		t.Errorf("paid.a@5m = %+v, want missing (count: no data)", s)
	}

	// A fake that answers only the query and the volume (through ByPart)
	// leaves the windows missing, the signal counted as before.
	fake := ByPart(func(_ context.Context, q string, _ time.Time) (model.Vector, error) {
		switch q {
		case sig.Query:
			return model.Vector{sample(0.1, "route", "free")}, nil
		case sig.Volume:
			return model.Vector{sample(120, "route", "free")}, nil
		}
		return nil, context.DeadlineExceeded
	})
	snap = collect(context.Background(), fake, []rules.SignalConfig{sig}, []string{"free"}, time.Unix(0, 0), 0)
	if s := snap.Get("free", "a"); s.Status != evaluator.StatusOK || s.Volume != 120 {
		t.Errorf("via ByPart free.a = %+v, want 0.1 of 120 calls", s)
	}
	if s := snap.Get("free", "a@15m"); s.Status != evaluator.StatusMissing {
		t.Errorf("via ByPart free.a@15m = %+v, want missing", s)
	}
}
