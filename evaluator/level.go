package evaluator

import "fmt"

// Level is a route's degradation level, from Normal (all traffic) to Manual.
type Level int

// Levels in order of severity.
const (
	Normal Level = iota
	Warm
	Shed
	Failover
	Manual
)

var levelNames = [...]string{"normal", "warm", "shed", "failover", "manual"}

func (l Level) String() string {
	if l < 0 || int(l) >= len(levelNames) {
		return fmt.Sprintf("level(%d)", int(l))
	}
	return levelNames[l]
}

// ParseLevel turns a level name into a Level.
func ParseLevel(s string) (Level, error) {
	for i, n := range levelNames {
		if n == s {
			return Level(i), nil
		}
	}
	return Normal, fmt.Errorf("unknown level %q (want one of normal, warm, shed, failover, manual)", s)
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
