package actuators_test

import (
	"testing"
	"time"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/traffic"
)

// TestRelayed: only an older stamp of the replica whose stamp the
// backend holds is a relayed write; anything else is written.
func TestRelayed(t *testing.T) {
	t1 := time.Date(2026, 11, 30, 7, 12, 15, 0, time.UTC)
	t2 := t1.Add(15 * time.Second)
	a1 := traffic.Stamp{Replica: "hermes-a", Tick: t1}
	a2 := traffic.Stamp{Replica: "hermes-a", Tick: t2}
	b1 := traffic.Stamp{Replica: "hermes-b", Tick: t1}
	for _, c := range []struct {
		name        string
		given, held traffic.Stamp
		want        bool
	}{
		{"older, same replica", a1, a2, true},
		{"same tick", a2, a2, false},
		{"newer, same replica", a2, a1, false},
		{"another replica", b1, a2, false},
		{"unstamped write", traffic.Stamp{}, a2, false},
		{"unstamped backend", a1, traffic.Stamp{}, false},
	} {
		if got := actuators.Relayed(c.given, c.held); got != c.want {
			t.Errorf("%s: Relayed(%+v, %+v) = %v, want %v", c.name, c.given, c.held, got, c.want)
		}
	}
}
