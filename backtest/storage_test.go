package backtest

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
	"github.com/prometheus/prometheus/model/labels"
)

// The signature of promapi.QueryFunc, spelled out to keep this package's
// tests independent of the evaluator's.
var _ func(context.Context, string, time.Time) (model.Vector, error) = (*Store)(nil).Query

const backtestFile = `
interval: 30s
input_series:
  - series: 'x{route="a"}'
    values: '0+30x8'        # 0 30 … 240, at 0s … 240s
  - series: 'x{route="b"}'
    values: '10 _ 30 stale 50'
  - series: 'y{route="a",code="500"}'
    values: '1x8'
  - series: 'y{route="a",code="200"}'
    values: '2x8'
  - series: 'y{route="b",code="200"}'
    values: '_ _ 4x6'
`

func openStore(t *testing.T, src string) *Store {
	t.Helper()
	f, err := Parse([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	})
	return b
}

// vectorString renders a vector as sorted "labels value" lines.
func vectorString(v model.Vector) string {
	var lines []string
	for _, s := range v {
		lines = append(lines, s.Metric.String()+" "+s.Value.String())
	}
	// Instant query results have no guaranteed order.
	for i := range lines {
		for j := i + 1; j < len(lines); j++ {
			if lines[j] < lines[i] {
				lines[i], lines[j] = lines[j], lines[i]
			}
		}
	}
	return strings.Join(lines, "; ")
}

func TestBacktestQuery(t *testing.T) {
	b := openStore(t, backtestFile)
	if got, want := b.Start(), time.Unix(0, 0); !got.Equal(want) {
		t.Errorf("Start = %v, want %v", got, want)
	}
	if got, want := b.End(), time.Unix(240, 0); !got.Equal(want) {
		t.Errorf("End = %v, want %v", got, want)
	}
	if b.Step() != 30*time.Second {
		t.Errorf("Step = %s, want 30s", b.Step())
	}

	tests := []struct {
		q    string
		at   int64 // seconds
		want string
	}{
		// (1m, 2m] holds 90@90s and 120@120s: an increase of 30 over 30s,
		// extrapolated by 30s to the window start (not to zero: 90s away),
		// 60 over the 60s window: 1/s.
		{`rate(x{route="a"}[1m])`, 120, `{route="a"} 1`},
		// Route b: 30@60s and a stale marker at 90s: one float sample in
		// (60s, 120s], so no rate.
		{`rate(x{route="b"}[1m])`, 120, ``},
		{`sum by (route) (y)`, 120, `{route="a"} 3; {route="b"} 4`},
		{`sum by (route) (y)`, 30, `{route="a"} 3`},
		{`x`, 45, `x{route="a"} 30; x{route="b"} 10`},
		{`x`, 75, `x{route="a"} 60; x{route="b"} 30`},
		// The stale marker at 90s ends route b until 50@120s.
		{`x`, 90, `x{route="a"} 90`},
		{`x`, 100, `x{route="a"} 90`},
		{`x`, 120, `x{route="a"} 120; x{route="b"} 50`},
		// Lookback: the last sample stays visible for 5 minutes.
		{`x{route="a"}`, 240 + 299, `x{route="a"} 240`},
		{`x{route="a"}`, 240 + 300, ``},
		{`max_over_time(x[10m])`, 600, `{route="a"} 240; {route="b"} 50`},
	}
	for _, tc := range tests {
		v, err := b.Query(context.Background(), tc.q, time.Unix(tc.at, 0))
		if err != nil {
			t.Errorf("%s at %ds: %v", tc.q, tc.at, err)
			continue
		}
		if got := vectorString(v); got != tc.want {
			t.Errorf("%s at %ds = %q, want %q", tc.q, tc.at, got, tc.want)
		}
		for _, s := range v {
			if s.Timestamp != model.TimeFromUnix(tc.at) {
				t.Errorf("%s at %ds: sample timestamp %v", tc.q, tc.at, s.Timestamp)
			}
		}
	}
}

func TestBacktestQueryErrors(t *testing.T) {
	b := openStore(t, backtestFile)
	at := time.Unix(60, 0)
	tests := []struct {
		q, want string
		typ     v1.ErrorType // "" when not an API error
	}{
		{`1 + 1`, "query must return an instant vector, got scalar", ""},
		{`x[1m]`, "query must return an instant vector, got matrix", ""},
		{`"text"`, "query must return an instant vector, got string", ""},
		{`sum(`, "parse error", v1.ErrBadData},
		{`y + on(route) x`, "multiple matches for labels", v1.ErrExec},
	}
	for _, tc := range tests {
		_, err := b.Query(context.Background(), tc.q, at)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.q, err, tc.want)
			continue
		}
		var apiErr *v1.Error
		if isAPI := errors.As(err, &apiErr); isAPI != (tc.typ != "") || (isAPI && apiErr.Type != tc.typ) {
			t.Errorf("%s: error %#v, want API error type %q", tc.q, err, tc.typ)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := b.Query(ctx, `x`, at)
	var apiErr *v1.Error
	if !errors.As(err, &apiErr) || apiErr.Type != v1.ErrCanceled {
		t.Errorf("canceled context: error %#v, want type canceled", err)
	}
}

func TestOpenErrors(t *testing.T) {
	lbl := labels.FromStrings("__name__", "x")
	tests := []struct {
		name string
		f    *File
		want string
	}{
		{"nil", nil, "no series"},
		{"no samples", &File{Interval: time.Minute, Series: []Series{{Labels: lbl}}}, "no samples"},
		{"interval", &File{Series: []Series{{Labels: lbl, Samples: []Sample{{0, 1}}}}}, "interval must be positive"},
		{"duplicate", &File{Interval: time.Minute, Series: []Series{
			{Labels: lbl, Samples: []Sample{{0, 1}}}, {Labels: lbl, Samples: []Sample{{60, 1}}},
		}}, "given twice"},
		{"order", &File{Interval: time.Minute, Series: []Series{{Labels: lbl, Samples: []Sample{{60, 1}, {0, 1}}}}}, "out of time order"},
	}
	for _, tc := range tests {
		if _, err := Open(tc.f); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}
