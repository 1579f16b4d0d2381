package runner

import (
	"reflect"
	"time"
)

// jumpThreshold is how far the wall clock may move apart from the
// monotonic clock between two ticks before the runner calls it a jump.
// NTP slews a clock by at most 0.5 ms a second (8 ms over a 15 s tick)
// and steps it only past 128 ms; a second leaves room for both and for a
// loaded machine, and a jump under it ages or freezes the timers by less
// than a second.
const jumpThreshold = time.Second

// wallWatch compares the wall clock with the monotonic one between two
// readings, the way the kernel's clocks differ when the wall clock is
// set (a step by NTP, a person, a VM resumed): the monotonic clock
// never jumps.
type wallWatch struct {
	wall time.Time
	mono time.Duration
	set  bool
}

// observe takes a reading of the wall clock and of the monotonic one and
// returns how far the wall clock jumped since the last reading: the wall
// time that passed less the monotonic time that did, or 0 when that is
// under jumpThreshold either way.
func (w *wallWatch) observe(wall time.Time, mono time.Duration) time.Duration {
	wall = wall.Round(0) // the wall reading alone: Sub must not use the monotonic one
	prev, prevMono, set := w.wall, w.mono, w.set
	w.wall, w.mono, w.set = wall, mono, true
	if !set {
		return 0
	}
	jump := wall.Sub(prev) - (mono - prevMono)
	if jump > -jumpThreshold && jump < jumpThreshold {
		return 0
	}
	return jump
}

// shiftTimes returns a deep copy of x with every non-zero time.Time in
// it moved by d (a map's keys excepted). After a wall-clock jump the
// runner moves the core's state with it: the core measures every dwell,
// cooldown, window, expiry and alert hold as now less a time it stored,
// so moving the stored times by the jump keeps each of them counting the
// time that really passed, and the next tick, at the new wall time,
// sees no jump. Reflection, not a method per type: the state's times
// live in a dozen types (routes, alerts, overrides, drills) that other
// changes add to, and a time missed here would age by the jump again
// (TestShiftTimesMovesEveryTime walks them all). Unexported fields are
// copied as they are; x is never written.
func shiftTimes[T any](x T, d time.Duration) T {
	return shiftValue(reflect.ValueOf(&x).Elem(), d).Interface().(T)
}

var timeType = reflect.TypeFor[time.Time]()

func shiftValue(v reflect.Value, d time.Duration) reflect.Value {
	if v.Type() == timeType {
		t := v.Interface().(time.Time)
		if t.IsZero() {
			return v
		}
		return reflect.ValueOf(t.Add(d))
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		p := reflect.New(v.Type().Elem())
		p.Elem().Set(shiftValue(v.Elem(), d))
		return p
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(shiftValue(v.Elem(), d))
		return out
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v)
		for i := range v.NumField() {
			if f := out.Field(i); f.CanSet() {
				f.Set(shiftValue(v.Field(i), d))
			}
		}
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(it.Key(), shiftValue(it.Value(), d))
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(shiftValue(v.Index(i), d))
		}
		return out
	case reflect.Array:
		out := reflect.New(v.Type()).Elem()
		for i := range v.Len() {
			out.Index(i).Set(shiftValue(v.Index(i), d))
		}
		return out
	}
	return v
}

// wallJumped moves the loop's state, the actuators' outcomes the core
// reads back and when each alert was last sent, by jump, and says so in one line and a count: the next
// tick, at the new wall time, then finds every timer where the time that
// really passed puts it.
func (r *Runner) wallJumped(jump time.Duration, now time.Time) {
	r.stages.telemetry.WallJumped()
	r.mu.Lock()
	r.state = shiftTimes(r.state, jump)
	r.mu.Unlock()
	r.stages.actuation.ShiftClock(jump)
	r.stages.alerting.ShiftClock(jump)
	r.log.Warn("wall clock jumped; moving the state's times with it, so that dwell, cooldown, expiry and alert timers count the time that really passed",
		"jump", jump, "now", now)
}
