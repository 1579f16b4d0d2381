package backtest

import (
	"context"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/rules/config"
)

// TestRecorderMatchesEngine proves the recordings exact on every scenario:
// each query of the shipped policy, run window by window as RunStore
// runs it, returns bit for bit what the engine returns for the query as
// written.
func TestRecorderMatchesEngine(t *testing.T) {
	onScenarios(t, func(t *testing.T, cfg *config.Config, b *Store, rec *Recorder) {
		step, queries := cfg.Global.EvaluationInterval, cfg.Queries()
		if len(rec.plan.rewrite) < len(queries)/2 {
			t.Fatalf("only %d of %d queries read a recording", len(rec.plan.rewrite), len(queries))
		}
		ctx := context.Background()
		windows(b, step, func(from, end time.Time) {
			r := v1.Range{Start: from, End: end, Step: step}
			for _, q := range queries {
				want, _, _, werr := b.QueryRange(ctx, q, r)
				got, _, _, gerr := rec.QueryRange(ctx, q, r)
				if (werr == nil) != (gerr == nil) {
					t.Fatalf("%s at %s: error %v, want %v", q, from, gerr, werr)
				}
				if werr == nil {
					sameMatrix(t, q, got.(model.Matrix), want.(model.Matrix))
				}
			}
			if rec.off {
				t.Fatalf("a recording failed in the window from %s", from)
			}
		})
	})
}

// onScenarios runs f, as a subtest per shipped scenario, with the shipped
// policy, the scenario's backtest and a Recorder of the policy's queries
// over it.
func onScenarios(t *testing.T, f func(t *testing.T, cfg *config.Config, b *Store, rec *Recorder)) {
	t.Helper()
	cfg, files := shippedScenarios(t)
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			b, err := OpenFile(path)
			if err != nil {
				t.Fatal(err)
			}
			f(t, cfg, b, NewRecorder(b, cfg.Queries(), cfg.Global.EvaluationInterval))
		})
	}
}

// windows calls f with the start and last tick of each window a backtest
// of b at step evaluates.
func windows(b *Store, step time.Duration, f func(from, end time.Time)) {
	for from := alignUp(b.Start(), step); !from.After(b.End()); from = from.Add(DefaultWindow) {
		f(from, minTime(from.Add(DefaultWindow-step), b.End()))
	}
}

// shippedScenarios returns the shipped policy and the scenario files.
func shippedScenarios(t *testing.T) (*config.Config, []string) {
	t.Helper()
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("../testdata/scenarios/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no scenarios: %v", err)
	}
	return cfg, files
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}

// sameMatrix fails unless got and want hold the same series, timestamps
// and value bits.
func sameMatrix(t *testing.T, q string, got, want model.Matrix) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: %d series, want %d", q, len(got), len(want))
	}
	for i := range want {
		if !got[i].Metric.Equal(want[i].Metric) || len(got[i].Values) != len(want[i].Values) {
			t.Fatalf("%s: series %d is %s with %d points, want %s with %d", q, i, got[i].Metric, len(got[i].Values), want[i].Metric, len(want[i].Values))
		}
		for j, p := range want[i].Values {
			g := got[i].Values[j]
			if g.Timestamp != p.Timestamp || math.Float64bits(float64(g.Value)) != math.Float64bits(float64(p.Value)) {
				t.Fatalf("%s: %s at %s is %v, want %v", q, want[i].Metric, p.Timestamp, g.Value, p.Value)
			}
		}
	}
}

// TestPlanRecordings checks what is shared and what must stay as written.
func TestPlanRecordings(t *testing.T) {
	const step = 15 * time.Second
	cases := []struct {
		name    string
		queries []string
		want    []string // rewritten queries, in order; "" for as written
	}{
		{"an offset reads the same recording earlier",
			[]string{`sum by (route) (rate(x[1h])) / sum by (route) (rate(x[1h] offset 30m))`},
			[]string{`{__hermes_recording__="0"} / {__hermes_recording__="0"} offset 30m`}},
		{"shared across queries",
			[]string{`sum(rate(x[5m])) > 1`, `sum(rate(x[5m])) < 2`},
			[]string{`{__hermes_recording__="0"} > 1`, `{__hermes_recording__="0"} < 2`}},
		{"an offset off the step grid is not shared",
			[]string{`rate(x[1h]) / rate(x[1h] offset 7s)`},
			[]string{""}},
		{"nothing under an aggregation",
			[]string{`sum(rate(x[5m]) * 2) + sum(rate(x[5m]) * 3)`},
			[]string{""}},
		{"@ stays as written",
			[]string{`rate(x[5m] @ 100) / rate(x[5m] @ 100)`},
			[]string{""}},
		{"time() is not recorded",
			[]string{`(rate(x[5m]) * time()) > 1`, `(rate(x[5m]) * time()) < 1`},
			[]string{`({__hermes_recording__="0"} * time()) > 1`, `({__hermes_recording__="0"} * time()) < 1`}},
		{"a selector alone is not worth recording",
			[]string{`x / x offset 1m`},
			[]string{""}},
		{"used once",
			[]string{`rate(x[5m])`},
			[]string{""}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p := planRecordings(c.queries, step, step)
			for i, q := range c.queries {
				if got := p.rewrite[q]; got != c.want[i] {
					t.Errorf("%s\n  rewritten to %q\n  want %q", q, got, c.want[i])
				}
			}
			if t.Failed() {
				for _, r := range p.recs {
					t.Logf("recording %s (back %s): %s", r.id, r.back, r.expr)
				}
			}
		})
	}
}

// TestPlanRecordingsReach checks that a recording is kept as far back as
// its offsets and subqueries read it.
func TestPlanRecordingsReach(t *testing.T) {
	p := planRecordings([]string{
		`min_over_time((sum by (le) (rate(x[1m])))[2m:15s]) / sum by (le) (rate(x[1m] offset 1h))`,
	}, 15*time.Second, 15*time.Second)
	if len(p.recs) != 1 {
		t.Fatalf("%d recordings, want 1", len(p.recs))
	}
	if got := p.recs[0]; got.back != time.Hour || !strings.Contains(got.expr, "rate(x[1m])") {
		t.Errorf("recording %q reaches back %s, want 1h", got.expr, got.back)
	}
}
