package rules

import (
	"errors"
	"strconv"
	"time"
)

// The core writes and reads durations as Prometheus does ("15m",
// "1h30m", "1d"). prometheus/common/model.Duration would do it, but that
// package brings protobuf and, with it, os and reflect into the core
// (evaluator's TestCoreDeps), for two functions; these two do the same,
// and TestDurationLikeModel holds them to model.Duration on every unit,
// their combinations and malformed input.

// durationUnits are Prometheus's duration units, largest first.
var durationUnits = []struct {
	name string
	size time.Duration
	// exact: written only when the duration is a whole number of it
	// (90d, not 12w6d).
	exact bool
}{
	{"y", 365 * 24 * time.Hour, true},
	{"w", 7 * 24 * time.Hour, true},
	{"d", 24 * time.Hour, false},
	{"h", time.Hour, false},
	{"m", time.Minute, false},
	{"s", time.Second, false},
	{"ms", time.Millisecond, false},
}

// FormatDuration writes d as Prometheus does (model.Duration's String):
// whole milliseconds in units from years down, years and weeks only when
// they divide it, "0s" for less than a millisecond.
func FormatDuration(d time.Duration) string {
	ms := d / time.Millisecond
	if ms == 0 {
		return "0s"
	}
	sign := ""
	if ms < 0 {
		sign, ms = "-", -ms
	}
	out := sign
	for _, u := range durationUnits {
		size := u.size / time.Millisecond
		if u.exact && ms%size != 0 {
			continue
		}
		if n := ms / size; n > 0 {
			out += strconv.FormatInt(int64(n), 10) + u.name
			ms -= n * size
		}
	}
	return out
}

// ParseDuration reads a Prometheus duration (model.ParseDuration): "0",
// or numbers each followed by a unit (y, w, d, h, m, s, ms), the units
// from largest to smallest, each at most once; with model's errors.
func ParseDuration(s string) (time.Duration, error) {
	switch s {
	case "0":
		return 0, nil
	case "":
		return 0, errors.New("empty duration string")
	}
	invalid := errors.New("not a valid duration string: " + strconv.Quote(s))
	var total uint64
	last := -1
	for rest := s; rest != ""; {
		i := 0
		for i < len(rest) && isDigit(rest[i]) {
			i++
		}
		if i == 0 {
			return 0, invalid
		}
		n, err := strconv.ParseUint(rest[:i], 10, 0)
		if err != nil {
			return 0, invalid
		}
		rest = rest[i:]
		j := 0
		for j < len(rest) && !isDigit(rest[j]) {
			j++
		}
		if j == 0 {
			return 0, invalid
		}
		unit := -1
		for k, u := range durationUnits {
			if u.name == rest[:j] {
				unit = k
			}
		}
		if unit < 0 {
			return 0, errors.New("unknown unit " + strconv.Quote(rest[:j]) + " in duration " + strconv.Quote(s))
		}
		if unit <= last {
			return 0, invalid
		}
		last, rest = unit, rest[j:]
		size := uint64(durationUnits[unit].size)
		if n > 1<<63/size {
			return 0, errors.New("duration out of range")
		}
		if total += n * size; total > 1<<63-1 {
			return 0, errors.New("duration out of range")
		}
	}
	return time.Duration(total), nil
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
