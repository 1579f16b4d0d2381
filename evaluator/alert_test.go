package evaluator

import (
	"testing"
	"time"
)

func TestFiredAt(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tick := 15 * time.Second
	for _, c := range []struct {
		forDur time.Duration
		now    time.Time
		want   time.Time
	}{
		{0, t0.Add(time.Hour), t0},
		{50 * time.Second, t0.Add(time.Hour), t0.Add(time.Minute)},
		{time.Minute, t0.Add(time.Hour), t0.Add(time.Minute)},
		{50 * time.Second, t0.Add(55 * time.Second), t0.Add(55 * time.Second)},
	} {
		if got := firedAt(t0, c.forDur, tick, c.now); !got.Equal(c.want) {
			t.Errorf("firedAt(for %s, now %s) = %s, want %s", c.forDur, c.now, got, c.want)
		}
	}
}
