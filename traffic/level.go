package traffic

import (
	"errors"
	"strconv"
)

// Level is a route's degradation level, from Normal (all its traffic) to
// Manual (no traffic until a person releases it).
type Level int

// Levels in order of severity. Failback is not a level a route is at: it is
// how a Split names a failed-over route during a staged failback, which
// carries traffic by design (up to 100 % at the last stage).
const (
	Normal Level = iota
	Warm
	Shed
	Failover
	Manual
	Failback
)

var levelNames = [...]string{"normal", "warm", "shed", "failover", "manual", "failback"}

func (l Level) String() string {
	if l < 0 || int(l) >= len(levelNames) {
		return "level(" + strconv.Itoa(int(l)) + ")"
	}
	return levelNames[l]
}

// Failed reports whether a route at level l must get no traffic by itself:
// failed over (and not being failed back) or manual.
func (l Level) Failed() bool { return l == Failover || l == Manual }

// ParseLevel turns a level name into a Level.
func ParseLevel(s string) (Level, error) {
	for i, n := range levelNames {
		if n == s {
			return Level(i), nil
		}
	}
	return Normal, errors.New("unknown level " + strconv.Quote(s) + " (want one of normal, warm, shed, failover, manual, failback)")
}

// MarshalText implements encoding.TextMarshaler.
func (l Level) MarshalText() ([]byte, error) { return []byte(l.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (l *Level) UnmarshalText(b []byte) error {
	v, err := ParseLevel(string(b))
	if err != nil {
		return err
	}
	*l = v
	return nil
}
