package runner

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/traffic"
)

// jumpingClock is a wall clock (Options.Now) that a test can move by
// any amount, while the monotonic clock (Options.Elapsed, left to its
// default) goes on: what a clock step by NTP or a person does.
type jumpingClock struct{ by atomic.Int64 }

func (c *jumpingClock) now() time.Time       { return time.Now().Add(time.Duration(c.by.Load())) }
func (c *jumpingClock) jump(d time.Duration) { c.by.Add(int64(d)) }
func freeOf(r *Runner) (lvl traffic.Level, stage int, since time.Time) {
	rs := r.View().State.Routes["free"]
	return rs.Level, rs.Stage, rs.Since
}

// failOver starts r, whose free route fails, and waits, tick by tick,
// until free is failed over.
func failOver(t *testing.T, r *Runner) {
	t.Helper()
	start(t, r)
	for range 40 {
		time.Sleep(15 * time.Second)
		synctest.Wait()
		if lvl, _, _ := freeOf(r); lvl == traffic.Failover {
			return
		}
	}
	t.Fatal("free did not fail over in 10 minutes")
}

// TestWallClockJumpsDoNotAgeTimers: the wall clock jumps an hour 4 s
// after free failed over. Forward, free must not go to manual (on
// 61391aa it did at the next tick: the failover looked an hour old), and
// goes there only once it has really failed for manual_after (30 m).
// Backward, with free healthy again, its failback must begin when it
// would have without the jump (on 61391aa it had not begun 20 minutes
// later: the failover looked an hour in the future). Each jump is logged
// once.
func TestWallClockJumpsDoNotAgeTimers(t *testing.T) {
	t.Run("+1h", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			var clock jumpingClock
			var logs testenv.Buffer
			reg := prometheus.NewRegistry()
			r, _ := newFileRunner(t, &fakeProm{soft: 0.5}, t.TempDir(), Options{Now: clock.now, Registerer: reg, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			failOver(t, r)
			failedOver := time.Now() // the monotonic clock: real time in the test
			time.Sleep(4 * time.Second)
			clock.jump(time.Hour)
			for time.Since(failedOver) < 29*time.Minute {
				time.Sleep(15 * time.Second)
				synctest.Wait()
				if lvl, _, since := freeOf(r); lvl != traffic.Failover {
					t.Fatalf("%s after the failover and a +1h jump, free is %s (since %s, the wall clock reads %s)",
						time.Since(failedOver).Round(time.Second), lvl, since.Format(time.TimeOnly), clock.now().Format(time.TimeOnly))
				}
			}
			for time.Since(failedOver) < 31*time.Minute {
				time.Sleep(15 * time.Second)
				synctest.Wait()
			}
			if lvl, _, _ := freeOf(r); lvl != traffic.Manual {
				t.Errorf("free failing for 31 minutes is %s, want manual (manual_after 30m counts the time that really passed)", lvl)
			}
			checkJumpLogged(t, logs.String(), "jump=1h0m0s")
			if v := testenv.Metric(t, reg, "hermes_wall_clock_jumps_total", nil); v != 1 {
				t.Errorf("hermes_wall_clock_jumps_total = %v, want 1", v)
			}
		})
	})
	t.Run("-1h", func(t *testing.T) {
		var logs testenv.Buffer
		steady := failbackAfter(t, 0, &testenv.Buffer{})
		jumped := failbackAfter(t, -time.Hour, &logs)
		t.Logf("failback began %s after free was healthy again; %s without the jump", jumped, steady)
		if jumped < steady-15*time.Second || jumped > steady+15*time.Second {
			t.Errorf("after a -1h jump free's failback began %s after it was healthy again, %s without the jump: want the same within a tick", jumped, steady)
		}
		checkJumpLogged(t, logs.String(), "jump=-1h0m0s")
	})
}

// failbackAfter fails free over, makes it healthy again 4 s later, moves
// the wall clock by jump at once, and returns how long after free was
// healthy again its failback began (by the monotonic clock).
func failbackAfter(t *testing.T, jump time.Duration, logs *testenv.Buffer) (took time.Duration) {
	synctest.Test(t, func(t *testing.T) {
		var clock jumpingClock
		fp := &fakeProm{soft: 0.5}
		r, _ := newFileRunner(t, fp, t.TempDir(), Options{Now: clock.now, Logger: slog.New(slog.NewTextHandler(logs, nil))})
		failOver(t, r)
		time.Sleep(4 * time.Second)
		fp.mu.Lock()
		fp.soft = 0.02 // free is healthy again
		fp.mu.Unlock()
		healthy := time.Now()
		clock.jump(jump)
		for {
			time.Sleep(15 * time.Second)
			synctest.Wait()
			if lvl, stage, _ := freeOf(r); lvl != traffic.Failover || stage > 0 {
				took = time.Since(healthy)
				return
			}
			if time.Since(healthy) > 30*time.Minute {
				_, _, since := freeOf(r)
				t.Fatalf("free, healthy for 30 minutes after a %s jump, has not begun its failback (failover since %s, the wall clock reads %s)",
					jump, since.Format(time.TimeOnly), clock.now().Format(time.TimeOnly))
			}
		}
	})
	return took
}

// checkJumpLogged checks that logs hold one line about a wall-clock
// jump, with want in it.
func checkJumpLogged(t *testing.T, logs, want string) {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(logs, "\n") {
		if strings.Contains(l, "wall clock jumped") {
			lines = append(lines, l)
		}
	}
	if len(lines) != 1 || !strings.Contains(lines[0], want) {
		t.Errorf("log lines about the jump: %q, want one with %q", lines, want)
	}
}

// TestShiftTimesMovesEveryTime fills every field of an evaluator.State,
// as deep as it goes, with one time, and checks that shiftTimes moves
// every time.Time it reaches, through maps, slices, arrays and pointers,
// and leaves the original as it was: a time field added to the state
// later is moved too, or this test says which one is not.
func TestShiftTimesMovesEveryTime(t *testing.T) {
	base := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	var st evaluator.State
	fill(reflect.ValueOf(&st).Elem(), base, 0)
	moved := shiftTimes(st, time.Hour)
	var before, after []string
	eachTime(reflect.ValueOf(st), "State", func(path string, tm time.Time) {
		if !tm.Equal(base) {
			before = append(before, path)
		}
	})
	n := 0
	eachTime(reflect.ValueOf(moved), "State", func(path string, tm time.Time) {
		n++
		if !tm.Equal(base.Add(time.Hour)) {
			after = append(after, path)
		}
	})
	if n < 20 {
		t.Fatalf("the filled state holds %d times: fill does not reach the state's time fields", n)
	}
	if len(before) > 0 {
		t.Errorf("shiftTimes wrote its input: %v", before)
	}
	if len(after) > 0 {
		t.Errorf("shiftTimes did not move %v", after)
	}
}

// fill sets every exported field v reaches to a value: times to at,
// strings to "x", one element in every map and slice, a new value behind
// every pointer (to depth 8).
func fill(v reflect.Value, at time.Time, depth int) {
	if v.Type() == reflect.TypeFor[time.Time]() {
		v.Set(reflect.ValueOf(at))
		return
	}
	switch v.Kind() {
	case reflect.String:
		v.SetString("x")
	case reflect.Pointer:
		if depth < 8 {
			v.Set(reflect.New(v.Type().Elem()))
			fill(v.Elem(), at, depth+1)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Field(i).CanSet() {
				fill(v.Field(i), at, depth)
			}
		}
	case reflect.Map:
		k, e := reflect.New(v.Type().Key()).Elem(), reflect.New(v.Type().Elem()).Elem()
		fill(k, at, depth+1)
		fill(e, at, depth+1)
		v.Set(reflect.MakeMap(v.Type()))
		v.SetMapIndex(k, e)
	case reflect.Slice:
		v.Set(reflect.MakeSlice(v.Type(), 1, 1))
		fill(v.Index(0), at, depth+1)
	case reflect.Array:
		for i := range v.Len() {
			fill(v.Index(i), at, depth)
		}
	}
}

// eachTime calls f with every time.Time v reaches, but map keys, and
// its path.
func eachTime(v reflect.Value, path string, f func(string, time.Time)) {
	if v.Type() == reflect.TypeFor[time.Time]() {
		f(path, v.Interface().(time.Time))
		return
	}
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			eachTime(v.Elem(), path, f)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				eachTime(v.Field(i), path+"."+v.Type().Field(i).Name, f)
			}
		}
	case reflect.Map:
		for it := v.MapRange(); it.Next(); {
			eachTime(it.Value(), fmt.Sprintf("%s[%v]", path, it.Key()), f)
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			eachTime(v.Index(i), fmt.Sprintf("%s[%d]", path, i), f)
		}
	}
}

// TestBackwardJumpKeepsResendingFiringAlerts: a page fires and is sent
// every resend delay (one second here); the wall clock then jumps an hour
// back. The page must go on being sent every resend delay: held back
// until the clock caught up, Alertmanager would resolve it once its
// endsAt passed. It runs the live loop in real time (1 s ticks) against
// an Alertmanager API stub.
func TestBackwardJumpKeepsResendingFiringAlerts(t *testing.T) {
	const page = "HermesRouteFailedOver"
	am := testenv.NewFakeAlertmanager(t)
	dir := t.TempDir()
	cfg := fastConfig(t, filepath.Join(dir, "split.json"))
	b, err := os.ReadFile(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, append(b, "\nalerting:\n  alertmanagers:\n    - url: "+am.URL+"\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	var clock jumpingClock
	r, _ := newFileRunner(t, &fakeProm{soft: 0.02, hard: 0.9}, dir, Options{ConfigPath: cfg, Now: clock.now})
	start(t, r)
	pages := func() int {
		n := 0
		for _, a := range am.Received() {
			if a.Labels["alertname"] == page {
				n++
			}
		}
		return n
	}
	testenv.Eventually(t, 30*time.Second, page+" sent twice", func() bool { return pages() >= 2 })
	clock.jump(-time.Hour)
	jumped := pages()
	testenv.EventuallyDetail(t, 30*time.Second, page+" sent three more times after a -1h jump", func() (bool, string) {
		n := pages()
		return n >= jumped+3, fmt.Sprint(n-jumped, " since the jump")
	})
}
