package actuators_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
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
		"path":    "/x",
		"dry_run": true,
		"retry":   map[string]any{"attempts": 2, "backoff": "10ms"},
	}
	acts, err := r.Build([]config.ActuatorConfig{
		// max_shift_per_tick is the core's (rules decodes it): no wrapper.
		{Name: "all", Type: "fake", Services: []string{"chat"}, MaxShiftPerTick: 25, Options: opts},
		{Name: "plain", Type: "fake"},
	}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(opts) != 3 {
		t.Errorf("Build modified the configuration's options: %v", opts)
	}
	wantLayers := []string{"*actuators.scoped", "*actuators.safety", "*actuators.retry", "*actuators.dryRun", "*actuators_test.fake"}
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
			"retry": map[string]any{"attempts": 20, "backoff": "2h"},
		}},
		{Name: "ok", Type: "fake", Options: map[string]any{"retry": map[string]any{}}},
	}, nil)
	if acts != nil {
		t.Errorf("Build returned actuators along with an error")
	}
	want := `actuators[0] (typos): colour: unknown key
actuators[0] (typos): dry_run: expected type 'bool', got unconvertible type 'string'
actuators[0] (typos): retry.backof: unknown key
actuators[1] (ranges): retry.attempts: 20 is out of range (want 1..10)
actuators[1] (ranges): retry.backoff: 2h0m0s is out of range (want 0s..1m0s)`
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
