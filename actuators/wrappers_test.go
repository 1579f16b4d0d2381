package actuators_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/actuators/actuatortest"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/traffic"
)

// fake is an in-memory backend: Apply stores the state, Current returns
// it. errs are returned by successive Apply calls (nil entries succeed).
type fake struct {
	name string
	log  *[]string // names of the fakes applied, in order, when set

	mu         sync.Mutex
	state      actuators.Splits
	applies    []actuators.Splits
	errs       []error
	currentErr error
}

func newFake(name string) *fake { return &fake{name: name, state: actuators.Splits{}} }

func (f *fake) Name() string { return f.name }

func (f *fake) Apply(_ context.Context, d actuators.Splits) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.applies = append(f.applies, clone(d))
	if f.log != nil {
		*f.log = append(*f.log, f.name)
	}
	var err error
	if len(f.errs) > 0 {
		err, f.errs = f.errs[0], f.errs[1:]
	}
	if err == nil {
		f.state = clone(d)
	}
	return err
}

func (f *fake) Current(context.Context) (actuators.Splits, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.currentErr != nil {
		return nil, f.currentErr
	}
	return clone(f.state), nil
}

func (f *fake) calls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.applies)
}

func (f *fake) last(t *testing.T) actuators.Splits {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.applies) == 0 {
		t.Fatal("nothing applied")
	}
	return f.applies[len(f.applies)-1]
}

func clone(d actuators.Splits) actuators.Splits {
	out := actuators.Splits{}
	for k, s := range d {
		out[k] = s.Clone()
	}
	return out
}

// chat is a desired state of the chat service only.
func chat(weights map[string]int, levels map[string]traffic.Level) actuators.Splits {
	return actuators.Splits{"chat": {Weights: weights, RetriesEnabled: true, Levels: levels}}
}

var errDown = errors.New("backend down")

func TestIsRetryable(t *testing.T) {
	if actuators.Retryable(nil) != nil {
		t.Error("Retryable(nil) != nil")
	}
	r := actuators.Retryable(io.ErrUnexpectedEOF)
	if !errors.Is(r, io.ErrUnexpectedEOF) || r.Error() != io.ErrUnexpectedEOF.Error() {
		t.Errorf("Retryable hides its error: %v", r)
	}
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{nil, false},
		{errDown, false},
		{r, true},
		{fmt.Errorf("service chat: %w", r), true},
		{errors.Join(errDown, fmt.Errorf("x: %w", r)), true},
		{errors.Join(errDown, errDown), false},
		{context.DeadlineExceeded, false},
	} {
		if got := actuators.IsRetryable(tc.err); got != tc.want {
			t.Errorf("IsRetryable(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}

func TestRetry(t *testing.T) {
	transient := actuators.Retryable(errDown)
	t.Run("retryable then success, exponential backoff", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := newFake("edge")
			f.errs = []error{transient, transient, nil}
			start := time.Now()
			if err := actuators.Retry(f, 3, time.Second).Apply(t.Context(), actuatortest.Shed()); err != nil {
				t.Fatal(err)
			}
			if f.calls() != 3 {
				t.Errorf("%d calls, want 3", f.calls())
			}
			if d := time.Since(start); d != 3*time.Second {
				t.Errorf("took %v, want 1s + 2s", d)
			}
		})
	})
	t.Run("permanent error is not retried", func(t *testing.T) {
		f := newFake("edge")
		f.errs = []error{errDown}
		err := actuators.Retry(f, 5, time.Hour).Apply(t.Context(), actuatortest.Shed())
		if !errors.Is(err, errDown) || f.calls() != 1 {
			t.Errorf("err = %v after %d calls, want errDown after 1", err, f.calls())
		}
	})
	t.Run("gives up after attempts", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := newFake("edge")
			f.errs = []error{transient, transient, transient, transient}
			err := actuators.Retry(f, 3, time.Second).Apply(t.Context(), actuatortest.Shed())
			if f.calls() != 3 || err == nil || !strings.Contains(err.Error(), "gave up after 3 attempts: backend down") {
				t.Errorf("err = %v after %d calls", err, f.calls())
			}
			if !actuators.IsRetryable(err) {
				t.Error("the final error lost its retryable mark: the next tick's retry wrapper would not retry")
			}
		})
	})
	t.Run("stops when the tick ends before the next attempt", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			f := newFake("edge")
			f.errs = []error{transient, transient, transient, transient}
			ctx, cancel := context.WithTimeout(t.Context(), 1500*time.Millisecond)
			defer cancel()
			start := time.Now()
			err := actuators.Retry(f, 4, time.Second).Apply(ctx, actuatortest.Shed())
			if f.calls() != 2 || err == nil || !strings.Contains(err.Error(), "tick ends") {
				t.Errorf("err = %v after %d calls, want giving up after 2", err, f.calls())
			}
			if d := time.Since(start); d != time.Second {
				t.Errorf("took %v, want 1s (no pointless wait until the deadline)", d)
			}
		})
	})
	t.Run("Current is retried too", func(t *testing.T) {
		f := newFake("edge")
		f.currentErr = transient
		_, err := actuators.Retry(f, 2, 0).Current(t.Context())
		if err == nil || !strings.Contains(err.Error(), "gave up after 2 attempts") {
			t.Errorf("Current err = %v", err)
		}
	})
}

func TestSafety(t *testing.T) {
	failoverNoDegraded := chat(map[string]int{"free": 100, "paid": 0}, map[string]traffic.Level{"free": traffic.Failover, "paid": traffic.Failover})
	for _, tc := range []struct {
		name string
		d    actuators.Splits
		errs []string
	}{
		{name: "normal", d: actuatortest.Normal()},
		{name: "shed", d: actuatortest.Shed()},
		{name: "failover, degraded embed", d: actuatortest.Failover()},
		{name: "empty", d: actuators.Splits{}},
		{name: "sum 95", d: chat(map[string]int{"free": 90, "paid": 5}, nil), errs: []string{"service chat: weights map[free:90 paid:5] sum to 95, want 100"}},
		{name: "negative", d: chat(map[string]int{"free": 110, "paid": -10}, nil), errs: []string{"service chat: route paid has a negative weight (-10)"}},
		{name: "no weights", d: chat(nil, nil), errs: []string{"sum to 0"}},
		{
			name: "all to a failed route without degraded mode",
			d:    failoverNoDegraded,
			errs: []string{"service chat: route free is at level failover but would get 100% of the traffic without degraded mode"},
		},
		{
			name: "last failback stage",
			d:    chat(map[string]int{"free": 100, "paid": 0}, map[string]traffic.Level{"free": traffic.Failback, "paid": traffic.Normal}),
		},
		{
			name: "a pin to a route the service no longer has",
			d:    chat(map[string]int{"free": 0, "paid": 0, "removed": 100}, map[string]traffic.Level{"free": traffic.Normal, "paid": traffic.Normal}),
			errs: []string{"service chat: route removed is not a route of the service (routes [free paid]) but would get 100% of the traffic"},
		},
		{
			name: "all to a manual route",
			d:    chat(map[string]int{"free": 0, "paid": 100}, map[string]traffic.Level{"paid": traffic.Manual}),
			errs: []string{"route paid is at level manual"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake("edge")
			err := actuators.Safety(f).Apply(t.Context(), tc.d)
			if len(tc.errs) == 0 {
				if err != nil || f.calls() != 1 {
					t.Fatalf("err = %v, %d applies; want it applied", err, f.calls())
				}
				return
			}
			if err == nil || f.calls() != 0 {
				t.Fatalf("err = %v, %d applies; want it refused", err, f.calls())
			}
			if actuators.IsRetryable(err) {
				t.Error("an unsafe state is retryable")
			}
			for _, e := range append(tc.errs, "refusing an unsafe desired state, nothing applied") {
				if !strings.Contains(err.Error(), e) {
					t.Errorf("error %q does not contain %q", err, e)
				}
			}
		})
	}
	// Degraded mode allows everything on a failed route.
	d := failoverNoDegraded
	st := d["chat"]
	st.Degraded = true
	d["chat"] = st
	if err := actuators.CheckSafety(d); err != nil {
		t.Errorf("degraded: %v", err)
	}
	// A pause holds the split a person froze, also once its route has
	// failed (the runner says so loudly): refusing it would leave the
	// backend on whatever it held and fail every later apply.
	d = chat(map[string]int{"free": 100, "paid": 0}, map[string]traffic.Level{"free": traffic.Failover, "paid": traffic.Normal})
	st = d["chat"]
	st.Override = traffic.Pause
	d["chat"] = st
	if err := actuators.CheckSafety(d); err != nil {
		t.Errorf("pause: %v", err)
	}
}

func TestRateLimitSteps(t *testing.T) {
	ctx := t.Context()
	f := newFake("edge")
	f.state = chat(map[string]int{"free": 100, "paid": 0}, nil) // the baseline, read from Current
	a := actuators.RateLimit(f, 20)
	shed := chat(map[string]int{"free": 50, "paid": 50}, map[string]traffic.Level{"free": traffic.Shed, "paid": traffic.Normal})
	for i, want := range []map[string]int{
		{"free": 80, "paid": 20},
		{"free": 60, "paid": 40},
		{"free": 50, "paid": 50},
		{"free": 50, "paid": 50},
	} {
		if err := a.Apply(ctx, shed); err != nil {
			t.Fatal(err)
		}
		got := f.last(t)["chat"]
		if !maps.Equal(got.Weights, want) {
			t.Fatalf("tick %d: applied %v, want %v", i+1, got.Weights, want)
		}
		limited := slices.ContainsFunc(got.Reasons, func(r string) bool { return strings.HasPrefix(r, "rate limit:") })
		if limited != (i < 2) {
			t.Errorf("tick %d: reasons %q", i+1, got.Reasons)
		}
		if !got.RetriesEnabled || got.Levels["free"] != traffic.Shed {
			t.Errorf("tick %d: flags or levels lost: %+v", i+1, got)
		}
	}
	if r := f.applies[0]["chat"].Reasons; len(r) != 1 || r[0] != "rate limit: moving 20 of 50 points toward the desired split this tick (max_shift_per_tick 20)" {
		t.Errorf("reasons = %q", r)
	}
	if len(shed["chat"].Reasons) != 0 {
		t.Error("RateLimit modified the caller's desired state")
	}
}

func TestRateLimitDrainsFailedRoutesAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name     string
		from, to map[string]int
		levels   map[string]traffic.Level
		want     map[string]int
	}{
		{
			name:   "failover moves everything at once",
			from:   map[string]int{"free": 100, "paid": 0},
			to:     map[string]int{"free": 0, "paid": 100},
			levels: map[string]traffic.Level{"free": traffic.Failover, "paid": traffic.Normal},
			want:   map[string]int{"free": 0, "paid": 100},
		},
		{
			name:   "manual drain plus a limited healthy shift",
			from:   map[string]int{"a": 50, "b": 50, "c": 0},
			to:     map[string]int{"a": 0, "b": 20, "c": 80},
			levels: map[string]traffic.Level{"a": traffic.Manual, "b": traffic.Shed},
			want:   map[string]int{"a": 0, "b": 40, "c": 60},
		},
		{
			name:   "the same move without levels is limited",
			from:   map[string]int{"free": 100, "paid": 0},
			to:     map[string]int{"free": 0, "paid": 100},
			levels: nil,
			want:   map[string]int{"free": 90, "paid": 10},
		},
		{
			name:   "failing back to a recovered route is limited",
			from:   map[string]int{"free": 0, "paid": 100},
			to:     map[string]int{"free": 100, "paid": 0},
			levels: map[string]traffic.Level{"free": traffic.Normal, "paid": traffic.Normal},
			want:   map[string]int{"free": 10, "paid": 90},
		},
		{
			name:   "largest remainder, ties by name",
			from:   map[string]int{"a": 100, "b": 0, "c": 0, "d": 0},
			to:     map[string]int{"a": 40, "b": 20, "c": 20, "d": 20},
			levels: nil,
			want:   map[string]int{"a": 90, "b": 4, "c": 3, "d": 3},
		},
		{
			// A reload removed the route: the backend may no longer know
			// it, so it is never asked for it again (nginx would refuse
			// every tick, and the service's traffic could no longer move).
			name:   "a route the target drops (removed by a reload) drains at once",
			from:   map[string]int{"old": 100},
			to:     map[string]int{"new": 100},
			levels: nil,
			want:   map[string]int{"new": 100},
		},
		{
			name:   "a removed route drains at once while healthy routes stay limited",
			from:   map[string]int{"gone": 50, "a": 50, "b": 0},
			to:     map[string]int{"a": 0, "b": 100},
			levels: map[string]traffic.Level{"a": traffic.Shed, "b": traffic.Normal},
			want:   map[string]int{"a": 40, "b": 60},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFake("edge")
			f.state = chat(tc.from, nil)
			if err := actuators.RateLimit(f, 10).Apply(t.Context(), chat(tc.to, tc.levels)); err != nil {
				t.Fatal(err)
			}
			if got := f.last(t)["chat"].Weights; !maps.Equal(got, tc.want) {
				t.Errorf("applied %v, want %v", got, tc.want)
			}
		})
	}
}

// TestRateLimitSurvivesARebuild rebuilds a rate-limited actuator whose
// backend cannot report its split (as a webhook), as a reload does: the new
// one goes on from the step the old one reached instead of jumping.
func TestRateLimitSurvivesARebuild(t *testing.T) {
	f := newFake("hook")
	f.state = chat(map[string]int{"free": 100, "paid": 0}, nil)
	target := chat(map[string]int{"free": 0, "paid": 100}, nil)
	old := actuators.Wrap(f, actuators.WrapOptions{MaxShiftPerTick: 20}, slog.New(slog.DiscardHandler))
	if err := old.Apply(t.Context(), target); err != nil {
		t.Fatal(err)
	}
	f.currentErr = errDown // from now on nothing can be read back
	rebuilt := actuators.Wrap(f, actuators.WrapOptions{MaxShiftPerTick: 20}, slog.New(slog.DiscardHandler))
	actuators.CarryRateLimits([]actuators.Actuator{old}, []actuators.Actuator{rebuilt})
	if err := rebuilt.Apply(t.Context(), target); err != nil {
		t.Fatal(err)
	}
	if got := f.last(t)["chat"].Weights; got["paid"] != 40 {
		t.Errorf("after the rebuild the split is %v, want paid 40 (one more 20-point step)", got)
	}
}

func TestRateLimitBaseline(t *testing.T) {
	ctx := t.Context()
	target := chat(map[string]int{"free": 0, "paid": 100}, nil)
	t.Run("no baseline: applied as is", func(t *testing.T) {
		f := newFake("edge")
		f.currentErr = errDown
		if err := actuators.RateLimit(f, 10).Apply(ctx, target); err != nil {
			t.Fatal(err)
		}
		if got := f.last(t)["chat"].Weights; !maps.Equal(got, target["chat"].Weights) {
			t.Errorf("applied %v, want the target", got)
		}
	})
	t.Run("a failed Apply does not advance", func(t *testing.T) {
		f := newFake("edge")
		f.state = chat(map[string]int{"free": 100, "paid": 0}, nil)
		f.errs = []error{errDown}
		a := actuators.RateLimit(f, 10)
		if err := a.Apply(ctx, target); !errors.Is(err, errDown) {
			t.Fatalf("err = %v", err)
		}
		f.currentErr = errDown // from now on the step comes from memory
		for _, want := range []int{90, 80} {
			if err := a.Apply(ctx, target); err != nil {
				t.Fatal(err)
			}
			if got := f.last(t)["chat"].Weights["free"]; got != want {
				t.Errorf("free = %d, want %d", got, want)
			}
		}
	})
	t.Run("disabled", func(t *testing.T) {
		f := newFake("edge")
		for _, n := range []int{0, -1, 100} {
			if a := actuators.RateLimit(f, n); a != actuators.Actuator(f) {
				t.Errorf("RateLimit(f, %d) wraps f", n)
			}
		}
	})
}

// TestRateLimitConverges checks random moves: every step is a split of
// non-negative integers summing to 100, moves at most maxShift points off
// healthy routes, and the target is reached in ceil(points/maxShift) ticks.
func TestRateLimitConverges(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	randomSplit := func(routes []string) map[string]int {
		w := map[string]int{}
		left := 100
		for i, r := range routes {
			n := left
			if i < len(routes)-1 {
				n = rng.IntN(left + 1)
			}
			w[r] = n
			left -= n
		}
		return w
	}
	for i := range 500 {
		routes := []string{"a", "b", "c", "d"}[:2+rng.IntN(3)]
		from, to := randomSplit(routes), randomSplit(routes)
		levels := map[string]traffic.Level{}
		for _, r := range routes {
			if rng.IntN(4) == 0 {
				levels[r] = traffic.Failover
			}
		}
		maxShift := 1 + rng.IntN(40)
		healthyLoss := 0
		for _, r := range routes {
			if d := from[r] - to[r]; d > 0 && levels[r] != traffic.Failover {
				healthyLoss += d
			}
		}
		f := newFake("edge")
		f.state = chat(from, nil)
		a := actuators.RateLimit(f, maxShift)
		prev := from
		ticks := 0
		for ; ticks < 200; ticks++ {
			if err := a.Apply(t.Context(), chat(to, levels)); err != nil {
				t.Fatal(err)
			}
			got := f.last(t)["chat"].Weights
			sum, healthyMoved := 0, 0
			for r, w := range got {
				sum += w
				if w < 0 {
					t.Fatalf("case %d: negative weight in %v", i, got)
				}
				if d := prev[r] - w; d > 0 && levels[r] != traffic.Failover {
					healthyMoved += d
				}
			}
			if sum != 100 || healthyMoved > maxShift {
				t.Fatalf("case %d: %v → %v (target %v, levels %v, max %d): sum %d, %d points off healthy routes",
					i, prev, got, to, levels, maxShift, sum, healthyMoved)
			}
			prev = got
			if maps.Equal(got, to) {
				break
			}
		}
		if want := (healthyLoss + maxShift - 1) / maxShift; ticks+1 != max(want, 1) {
			t.Errorf("case %d: %v → %v with max %d took %d ticks, want %d", i, from, to, maxShift, ticks+1, max(want, 1))
		}
	}
}

func TestDryRun(t *testing.T) {
	ctx := t.Context()
	var buf bytes.Buffer
	logger := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{
		ReplaceAttr: func(_ []string, a slog.Attr) slog.Attr {
			if a.Key == slog.TimeKey {
				return slog.Attr{}
			}
			return a
		},
	}))
	f := newFake("edge")
	f.state = actuatortest.Normal()
	a := actuators.DryRun(f, logger)
	if err := a.Apply(ctx, actuatortest.Shed()); err != nil {
		t.Fatal(err)
	}
	if err := a.Apply(ctx, actuatortest.Shed()); err != nil { // same state: not logged again at info
		t.Fatal(err)
	}
	if f.calls() != 0 {
		t.Errorf("dry run applied %d times", f.calls())
	}
	want := `level=INFO msg="dry run: would apply" dry_run=true service=chat from="free=100 paid=0" to="free=50 paid=50" retries_enabled=true degraded_mode=false reasons="free: score 72 < 75 for 2m"
`
	if buf.String() != want {
		t.Errorf("log =\n%s\nwant\n%s", buf.String(), want)
	}
	got, err := a.Current(ctx)
	if err != nil || !got["chat"].Equal(actuatortest.Normal()["chat"]) {
		t.Errorf("Current = %v, %v; want the backend's state", got, err)
	}
	// An unreadable backend: the desired state is still logged, nil returned.
	buf.Reset()
	f.currentErr = errDown
	if err := a.Apply(ctx, actuatortest.Failover()); err != nil {
		t.Fatal(err)
	}
	if s := buf.String(); !strings.Contains(s, "cannot read the current state") || !strings.Contains(s, `service=embed from=unknown to="embed-free=100"`) {
		t.Errorf("log =\n%s", s)
	}
}

func TestFanOut(t *testing.T) {
	ctx := t.Context()
	var order []string
	a, b, c := newFake("a-edge"), newFake("b-edge"), newFake("c-edge")
	for _, f := range []*fake{a, b, c} {
		f.log = &order
	}
	b.errs = []error{actuators.Retryable(errDown)}
	c.errs = []error{errors.New("bad request")}
	fo := actuators.FanOut("edges", c, a, b)
	if fo.Name() != "edges" {
		t.Errorf("Name = %q", fo.Name())
	}
	err := fo.Apply(ctx, actuatortest.Shed())
	if !slices.Equal(order, []string{"a-edge", "b-edge", "c-edge"}) {
		t.Errorf("order = %v, want sorted by name, every actuator tried", order)
	}
	want := "actuator b-edge: backend down\nactuator c-edge: bad request"
	if err == nil || err.Error() != want {
		t.Errorf("err =\n%v\nwant\n%s", err, want)
	}
	if !actuators.IsRetryable(err) {
		t.Error("a partly transient failure is not retryable")
	}
	if err := fo.Apply(ctx, actuatortest.Shed()); err != nil {
		t.Errorf("second Apply: %v", err)
	}

	// Current: per service, the first actuator (by name) that answers.
	a.currentErr = errDown
	b.state = actuators.Filter(actuatortest.Normal(), []string{"chat"})
	c.state = actuatortest.Failover()
	got, err := fo.Current(ctx)
	if err == nil || strings.Count(err.Error(), "backend down") != 1 {
		t.Errorf("a partial failure must be reported with the answers: err = %v", err)
	}
	if !got["chat"].Equal(actuatortest.Normal()["chat"]) || !got["embed"].Equal(actuatortest.Failover()["embed"]) {
		t.Errorf("Current = %+v", got)
	}
	b.currentErr, c.currentErr = errDown, errDown
	if _, err := fo.Current(ctx); err == nil || strings.Count(err.Error(), "backend down") != 3 {
		t.Errorf("Current with every actuator failing: err = %v", err)
	}
}

// layers lists the types of a wrapped actuator, outermost first.
func layers(a actuators.Actuator) []string {
	var out []string
	for {
		out = append(out, reflect.TypeOf(a).String())
		u, ok := a.(interface{ Unwrap() actuators.Actuator })
		if !ok {
			return out
		}
		a = u.Unwrap()
	}
}

// fakeRegistry registers kind "fake", whose options ({path}) are decoded
// strictly: a reserved key reaching it would be an unknown key.
func fakeRegistry(built *[]*fake) *actuators.Registry {
	var r actuators.Registry
	r.Register("fake", func(s actuators.Settings) (actuators.Actuator, error) {
		var o struct {
			Path string `mapstructure:"path"`
		}
		if err := actuators.DecodeOptions(s.Options, &o); err != nil {
			return nil, err
		}
		f := newFake(s.Name)
		*built = append(*built, f)
		return f, nil
	})
	return &r
}

func TestBuildReservedKeys(t *testing.T) {
	var built []*fake
	r := fakeRegistry(&built)
	opts := map[string]any{
		"path":               "/x",
		"dry_run":            true,
		"retry":              map[string]any{"attempts": 2, "backoff": "10ms"},
		"max_shift_per_tick": 25,
	}
	acts, err := r.Build([]config.ActuatorConfig{
		{Name: "all", Type: "fake", Services: []string{"chat"}, Options: opts},
		{Name: "plain", Type: "fake"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(opts) != 4 {
		t.Errorf("Build modified the configuration's options: %v", opts)
	}
	wantLayers := []string{"*actuators.scoped", "*actuators.safety", "*actuators.rateLimit", "*actuators.retry", "*actuators.dryRun", "*actuators_test.fake"}
	if got := layers(acts[0]); !slices.Equal(got, wantLayers) {
		t.Errorf("layers = %v, want %v", got, wantLayers)
	}
	if got, want := layers(acts[1]), []string{"*actuators.scoped", "*actuators.safety", "*actuators_test.fake"}; !slices.Equal(got, want) {
		t.Errorf("layers without reserved keys = %v, want %v", got, want)
	}
	for i, a := range acts {
		if a.Name() != built[i].name || actuators.Backend(a) != actuators.Actuator(built[i]) {
			t.Errorf("acts[%d]: name %q, backend %v", i, a.Name(), actuators.Backend(a))
		}
	}
	if !actuators.IsDryRun(acts[0]) || actuators.IsDryRun(acts[1]) {
		t.Error("IsDryRun does not tell the dry-run actuator")
	}
	ctx := t.Context()
	if err := acts[0].Apply(ctx, actuatortest.Shed()); err != nil || built[0].calls() != 0 {
		t.Errorf("dry run: err %v, %d applies", err, built[0].calls())
	}
	// Safety is always on.
	bad := chat(map[string]int{"free": 90}, nil)
	if err := acts[1].Apply(ctx, bad); err == nil || built[1].calls() != 0 {
		t.Errorf("plain actuator applied an unsafe state (err %v)", err)
	}
	// The services filter reaches the backend.
	var b2 []*fake
	acts, err = fakeRegistry(&b2).Build([]config.ActuatorConfig{{Name: "chat-only", Type: "fake", Services: []string{"chat"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := acts[0].Apply(ctx, actuatortest.Shed()); err != nil {
		t.Fatal(err)
	}
	if got := slices.Collect(maps.Keys(b2[0].last(t))); !slices.Equal(got, []string{"chat"}) {
		t.Errorf("backend got services %v, want chat only", got)
	}
}

func TestBuildSettings(t *testing.T) {
	var got []actuators.Settings
	var r actuators.Registry
	r.Register("fake", func(s actuators.Settings) (actuators.Actuator, error) {
		got = append(got, s)
		return newFake(s.Name), nil
	})
	services := []string{"chat"}
	_, err := r.Build([]config.ActuatorConfig{
		{Name: "edge", Type: "fake", Services: services, Options: map[string]any{"path": "/x", "dry_run": true}},
		{Type: "fake"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("factory called %d times, want 2", len(got))
	}
	if s := got[0]; s.Name != "edge" || s.Type != "fake" || !slices.Equal(s.Services, services) || !maps.Equal(s.Options, map[string]any{"path": "/x"}) || s.Logger == nil {
		t.Errorf("settings = %+v, want edge, fake, [chat], {path: /x} and a logger", s)
	}
	if s := got[1]; s.Name != "fake" || s.Services != nil || s.Options != nil || s.Logger == nil {
		t.Errorf("settings of an unnamed actuator = %+v, want named after its type, all services, a logger", s)
	}
	services[0] = "changed"
	if got[0].Services[0] != "chat" {
		t.Error("Settings.Services aliases the configuration")
	}
}

func TestBuildReservedKeyErrors(t *testing.T) {
	var built []*fake
	r := fakeRegistry(&built)
	acts, err := r.Build([]config.ActuatorConfig{
		{Name: "typos", Type: "fake", Options: map[string]any{
			"colour": "red", "dry_run": "yes", "retry": map[string]any{"attempts": 2, "backof": "1s"},
		}},
		{Name: "ranges", Type: "fake", Options: map[string]any{
			"retry": map[string]any{"attempts": 20, "backoff": "2h"}, "max_shift_per_tick": 101,
		}},
		{Name: "ok", Type: "fake", Options: map[string]any{"retry": map[string]any{}, "max_shift_per_tick": 0}},
	}, nil)
	if acts != nil {
		t.Errorf("Build returned actuators along with an error")
	}
	want := `actuators[0] (typos): colour: unknown key
actuators[0] (typos): dry_run: expected type 'bool', got unconvertible type 'string'
actuators[0] (typos): retry.backof: unknown key
actuators[1] (ranges): retry.attempts: 20 is out of range (want 1..10)
actuators[1] (ranges): retry.backoff: 2h0m0s is out of range (want 0s..1m0s)
actuators[1] (ranges): max_shift_per_tick: 101 is out of range (want 1..100, or 0 for no limit)`
	if err == nil || err.Error() != want {
		t.Errorf("Build error =\n%v\nwant\n%s", err, want)
	}
	o, rest, err := actuators.SplitWrapOptions(map[string]any{"retry": map[string]any{}, "path": "/x"})
	if err != nil || o.Retry != (actuators.RetryOptions{Attempts: actuators.DefaultRetryAttempts, Backoff: actuators.DefaultRetryBackoff}) || len(rest) != 1 {
		t.Errorf("retry: {} = %+v, %v, %v; want the defaults", o, rest, err)
	}
}

func TestDrift(t *testing.T) {
	ctx := t.Context()
	var built []*fake
	acts, err := fakeRegistry(&built).Build([]config.ActuatorConfig{{Name: "chat-only", Type: "fake", Services: []string{"chat"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, f := acts[0], built[0]
	if drift, err := actuators.Drift(ctx, a, actuatortest.Shed()); err != nil || !drift {
		t.Errorf("before any Apply: drift %v, %v; want true (the backend lacks chat)", drift, err)
	}
	if err := a.Apply(ctx, actuatortest.Shed()); err != nil {
		t.Fatal(err)
	}
	if drift, err := actuators.Drift(ctx, a, actuatortest.Shed()); err != nil || drift {
		t.Errorf("after Apply: drift %v, %v; want false (embed is not this actuator's)", drift, err)
	}
	d := actuatortest.Shed()
	st := d["chat"]
	st.Reasons = []string{"only reasons differ"}
	d["chat"] = st
	if drift, _ := actuators.Drift(ctx, a, d); drift {
		t.Error("reasons count as drift")
	}
	f.mu.Lock()
	f.state["chat"] = actuatortest.Normal()["chat"] // someone edited the backend
	f.mu.Unlock()
	if drift, err := actuators.Drift(ctx, a, actuatortest.Shed()); err != nil || !drift {
		t.Errorf("after an outside change: drift %v, %v; want true", drift, err)
	}
	f.currentErr = errDown
	if _, err := actuators.Drift(ctx, a, actuatortest.Shed()); !errors.Is(err, errDown) {
		t.Errorf("err = %v, want the Current error", err)
	}
}
