package backtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/internal/testenv"
)

// v1.API is a RangeQuerier, and RangeCache.Query an promapi.QueryFunc.
var _ RangeQuerier = v1.API(nil)

var _ func(context.Context, string, time.Time) (model.Vector, error) = (*RangeCache)(nil).Query

// fakeRange answers range queries from a function of (query, tick) and
// records the ranges asked for.
type fakeRange struct {
	mu     sync.Mutex
	calls  []string
	answer func(q string, r v1.Range) (model.Value, error)
}

func (f *fakeRange) QueryRange(_ context.Context, q string, r v1.Range, _ ...v1.Option) (model.Value, v1.Warnings, v1.Infos, error) {
	f.mu.Lock()
	f.calls = append(f.calls, fmt.Sprintf("%s %d..%d/%s", q, r.Start.Unix(), r.End.Unix(), r.Step))
	f.mu.Unlock()
	v, err := f.answer(q, r)
	return v, nil, nil, err
}

// ticksMatrix returns series route="r" valued by the tick's Unix seconds at
// every tick of r, and route="s" at even seconds only.
func ticksMatrix(r v1.Range) model.Value {
	rs := &model.SampleStream{Metric: model.Metric{"route": "r"}}
	ss := &model.SampleStream{Metric: model.Metric{"route": "s"}}
	for t := r.Start; !t.After(r.End); t = t.Add(r.Step) {
		p := model.SamplePair{Timestamp: model.TimeFromUnixNano(t.UnixNano()), Value: model.SampleValue(t.Unix())}
		rs.Values = append(rs.Values, p)
		if t.Unix()%2 == 0 {
			ss.Values = append(ss.Values, p)
		}
	}
	return model.Matrix{rs, ss}
}

func TestRangeCacheChunksAndAnswers(t *testing.T) {
	from, to := time.Unix(0, 0), time.Unix(25_000, 0)
	fake := &fakeRange{answer: func(q string, r v1.Range) (model.Value, error) {
		if q == "bad" && r.Start.Unix() == 11_000 {
			return nil, &v1.Error{Type: v1.ErrExec, Msg: "many-to-many matching not allowed"}
		}
		return ticksMatrix(r), nil
	}}
	c, err := NewRangeCache(context.Background(), fake, []string{"q", "bad", "q"}, from, to, time.Second)
	if err != nil {
		t.Fatal(err)
	}
	wantCalls := []string{
		"bad 0..10999/1s", "bad 11000..21999/1s", "bad 22000..25000/1s",
		"q 0..10999/1s", "q 11000..21999/1s", "q 22000..25000/1s",
	}
	// Queries run at once, each one's chunks in order.
	slices.Sort(fake.calls)
	if got := strings.Join(fake.calls, ", "); got != strings.Join(wantCalls, ", ") {
		t.Errorf("range queries:\n got %s\nwant %s", got, strings.Join(wantCalls, ", "))
	}
	if !c.Start().Equal(from) || !c.End().Equal(to) || c.Step() != time.Second {
		t.Errorf("window %v..%v/%s, want %v..%v/1s", c.Start(), c.End(), c.Step(), from, to)
	}

	tests := []struct {
		q       string
		at      int64
		want    string
		wantErr string
	}{
		{"q", 0, `{route="r"} 0; {route="s"} 0`, ""},
		{"q", 12_345, `{route="r"} 12345`, ""},
		{"q", 12_346, `{route="r"} 12346; {route="s"} 12346`, ""},
		{"q", 25_000, `{route="r"} 25000; {route="s"} 25000`, ""},
		{"bad", 10_999, `{route="r"} 10999`, ""},
		{"bad", 11_000, "", "execution: many-to-many"},
		{"bad", 21_999, "", "execution: many-to-many"},
		{"bad", 22_000, `{route="r"} 22000; {route="s"} 22000`, ""},
		{"other", 0, "", `query "other" was not fetched`},
		{"q", 25_001, "", "is not a tick"},
		{"q", -1, "", "is not a tick"},
	}
	for _, tc := range tests {
		v, err := c.Query(context.Background(), tc.q, time.Unix(tc.at, 0))
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s at %d: error %v, want %q", tc.q, tc.at, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s at %d: %v", tc.q, tc.at, err)
			continue
		}
		if got := vectorString(v); got != tc.want {
			t.Errorf("%s at %d = %q, want %q", tc.q, tc.at, got, tc.want)
		}
	}
	if _, err := c.Query(context.Background(), "q", time.Unix(10, 500_000_000)); err == nil {
		t.Error("a time between ticks: no error")
	}
	var apiErr *v1.Error
	if _, err := c.Query(context.Background(), "bad", time.Unix(11_000, 0)); !errors.As(err, &apiErr) {
		t.Errorf("replayed error %#v is not a *v1.Error", err)
	}
}

func TestRangeCacheEndAlignsToStep(t *testing.T) {
	fake := &fakeRange{answer: func(_ string, r v1.Range) (model.Value, error) { return ticksMatrix(r), nil }}
	c, err := NewRangeCache(context.Background(), fake, []string{"q"}, time.Unix(100, 0), time.Unix(170, 0), 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(fake.calls, ", "); got != "q 100..160/30s" {
		t.Errorf("range queries: %s", got)
	}
	if want := time.Unix(160, 0); !c.End().Equal(want) {
		t.Errorf("End = %v, want %v", c.End(), want)
	}
}

func TestRangeCacheErrors(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	tests := []struct {
		name     string
		answer   model.Value
		err      error
		from, to int64
		step     time.Duration
		want     string
	}{
		{"connection", nil, refused, 0, 60, time.Second, `range query "q" from 1970-01-01T00:00:00Z to 1970-01-01T00:01:00Z: dial tcp: connection refused`},
		{"server", nil, &v1.Error{Type: v1.ErrServer, Msg: "server error: 503"}, 0, 60, time.Second, "server_error"},
		{"vector", model.Vector{}, nil, 0, 60, time.Second, "returned vector, not a matrix"},
		{"nothing", nil, nil, 0, 60, time.Second, "returned nothing, not a matrix"},
		{"step", model.Matrix{}, nil, 0, 60, 0, "step must be at least 1ms"},
		{"backwards", model.Matrix{}, nil, 60, 0, time.Second, "is before start"},
	}
	for _, tc := range tests {
		fake := &fakeRange{answer: func(string, v1.Range) (model.Value, error) { return tc.answer, tc.err }}
		_, err := NewRangeCache(context.Background(), fake, []string{"q"}, time.Unix(tc.from, 0).UTC(), time.Unix(tc.to, 0).UTC(), tc.step)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want it to contain %q", tc.name, err, tc.want)
		}
	}
}

// TestRangeCachePrometheus replays a real Prometheus, if one is installed:
// queries that need no stored data, over more ticks than one range query
// may return.
func TestRangeCachePrometheus(t *testing.T) {
	// An empty Prometheus (skipped outside CI when missing, failed on CI).
	tsdb := testenv.StartTSDB(t, testenv.Prometheus, "global:\n  scrape_interval: 1m\n", "")
	tsdb.StopSignal = syscall.SIGKILL // a throwaway empty TSDB: nothing to shut down cleanly
	prom := tsdb.API

	from := time.Unix(1_700_000_000, 0)
	to := from.Add(12_000 * time.Second)
	const (
		byTick = `label_replace(vector(time()), "route", "r", "", "")`
		broken = `sum(`
	)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := NewRangeCache(ctx, prom, []string{byTick, broken}, from, to, time.Second, v1.WithTimeout(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range []int64{0, 1, 10_999, 11_000, 12_000} {
		at := from.Add(time.Duration(sec) * time.Second)
		v, err := c.Query(ctx, byTick, at)
		if err != nil {
			t.Fatalf("at +%ds: %v", sec, err)
		}
		if want := fmt.Sprintf(`{route="r"} %d`, at.Unix()); vectorString(v) != want {
			t.Errorf("at +%ds = %q, want %q", sec, vectorString(v), want)
		}
	}
	_, err = c.Query(ctx, broken, from)
	var apiErr *v1.Error
	if !errors.As(err, &apiErr) || apiErr.Type != v1.ErrBadData {
		t.Errorf("broken query: error %#v, want a bad_data API error", err)
	}
}

// TestRangeAnswerTick checks that a sample's timestamp finds the tick that
// Query reads at the same millisecond, also on grids that are not whole
// milliseconds, and no tick otherwise.
func TestRangeAnswerTick(t *testing.T) {
	for _, grid := range []struct {
		from time.Time
		step time.Duration
	}{
		{time.Unix(1_700_000_000, 0), 15 * time.Second},
		{time.Unix(0, 0), time.Millisecond},
		{time.Unix(100, 300_000), 1500 * time.Microsecond},
		{time.Unix(-5, 999_999), 2*time.Millisecond + 1},
	} {
		a := &rangeAnswer{ticks: make([][]tickSample, 50), from: grid.from, step: grid.step}
		ticks := map[int64]int{}
		for k := range a.ticks {
			ticks[grid.from.Add(time.Duration(k)*grid.step).UnixMilli()] = k
		}
		first, last := grid.from.UnixMilli()-3, grid.from.Add(50*grid.step).UnixMilli()+3
		for ms := first; ms <= last; ms++ {
			k, ok := a.tick(ms)
			want, wantOK := ticks[ms]
			if ok != wantOK || k != want {
				t.Errorf("from %s every %s: %d ms is tick %d (%v), want %d (%v)", grid.from, grid.step, ms, k, ok, want, wantOK)
			}
		}
	}
}

// TestRangeAnswerTickAsTime: tick, in integer nanoseconds, finds the tick
// the time.Time arithmetic it replaces finds, for windows starting before
// and after 1970, off the millisecond, with steps off the millisecond, and
// samples on, beside and between ticks.
func TestRangeAnswerTickAsTime(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	want := func(a *rangeAnswer, ms int64) (int, bool) {
		k := int(time.UnixMilli(ms).Sub(a.from) / a.step)
		for _, c := range []int{k, k + 1} {
			if c >= 0 && c < len(a.ticks) && a.from.Add(time.Duration(c)*a.step).UnixMilli() == ms {
				return c, true
			}
		}
		return 0, false
	}
	for range 2000 {
		from := time.Unix(rng.Int64N(4e9)-2e9, rng.Int64N(1e9))
		step := time.Duration(1+rng.Int64N(30_000)) * time.Millisecond
		if rng.IntN(2) == 0 {
			step += time.Duration(rng.Int64N(int64(time.Millisecond)))
		}
		a := &rangeAnswer{ticks: make([][]tickSample, 1+rng.IntN(50)), from: from, step: step}
		for range 50 {
			c := rng.IntN(len(a.ticks)+4) - 2
			ms := from.Add(time.Duration(c)*step).UnixMilli() + rng.Int64N(5) - 2
			gotK, gotOK := a.tick(ms)
			wantK, wantOK := want(a, ms)
			if gotK != wantK || gotOK != wantOK {
				t.Fatalf("from %s step %s, t %d: tick %d %v, want %d %v", from.Format(time.RFC3339Nano), step, ms, gotK, gotOK, wantK, wantOK)
			}
		}
	}
}
