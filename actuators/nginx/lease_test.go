package nginx

import (
	"context"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/traffic"
)

// stamped is split(free, paid, spare) written by replica at tick.
func stamped(free, paid, spare int, replica string, tick time.Time) actuators.Splits {
	d := split(free, paid, spare)
	s := d["chat"]
	s.Writer = traffic.Stamp{Replica: replica, Tick: tick}
	d["chat"] = s
	return d
}

// writerOf is the stamp a reports for chat, failing t on an error.
func writerOf(t *testing.T, a *Actuator) traffic.Split {
	t.Helper()
	got, err := a.Current(context.Background())
	if err != nil {
		t.Fatalf("Current: %v", err)
	}
	return got["chat"]
}

// TestWriterStampRoundTrip: the writer's stamp Apply is given comes back
// from Current through what the real nginx serves (state_listen), and
// from the include file without it; a renewed stamp alone (the lease
// holder's next tick) is a change nginx reloads for and then serves.
func TestWriterStampRoundTrip(t *testing.T) {
	n := startNginx(t)
	opts := with(n.options(), chatUpstreams(t, ""), "state_listen", testenv.FreeAddr(t))
	a := newActuator(t, opts)
	tick := time.Date(2026, 11, 30, 7, 12, 15, 0, time.UTC)
	applyAndWait(t, n, a, stamped(95, 5, 0, "hermes-a", tick))
	if got := writerOf(t, a); !got.Writer.Equal(traffic.Stamp{Replica: "hermes-a", Tick: tick}) || got.Weights["paid"] != 5 {
		t.Fatalf("served %v by %+v, want paid=5 by hermes-a at %v", got.Weights, got.Writer, tick)
	}
	fromFile := newActuator(t, with(n.options(), opts["upstreams"].(map[string]any)))
	if got := writerOf(t, fromFile); got.Writer.Replica != "hermes-a" || !got.Writer.Tick.Equal(tick) {
		t.Errorf("include file's stamp %+v, want hermes-a at %v", got.Writer, tick)
	}

	renewed := tick.Add(15 * time.Second)
	reloads := n.reloads()
	applyAndWait(t, n, a, stamped(95, 5, 0, "hermes-a", renewed))
	if got := writerOf(t, a); !got.Writer.Tick.Equal(renewed) {
		t.Errorf("after renewing, nginx serves the stamp %+v, want the tick %v", got.Writer, renewed)
	}
	if n.reloads() == reloads {
		t.Error("a renewed stamp did not reload nginx: the other replica would read an expired lease")
	}
	wantSplit(t, n, split(95, 5, 0))
}

// TestRelayedOlderStampKeepsTheNewer: the replica that defers writes back
// the holder's split as it read it, possibly a tick old. Such a relayed
// write, the same replica's stamp but older, must leave the holder's
// newer split in the file and in nginx; another replica's stamp (a lease
// that expired, or a person's pin) is written.
func TestRelayedOlderStampKeepsTheNewer(t *testing.T) {
	n := startNginx(t)
	a := newActuator(t, with(n.options(), chatUpstreams(t, ""), "state_listen", testenv.FreeAddr(t)))
	t1 := time.Date(2026, 11, 30, 7, 12, 15, 0, time.UTC)
	t2 := t1.Add(15 * time.Second)
	applyAndWait(t, n, a, stamped(0, 100, 0, "hermes-a", t2))

	if err := a.Apply(context.Background(), stamped(100, 0, 0, "hermes-a", t1)); err != nil {
		t.Fatalf("relayed Apply: %v", err)
	}
	if got := writerOf(t, a); got.Weights["paid"] != 100 || !got.Writer.Tick.Equal(t2) {
		t.Errorf("after a relayed older write nginx serves %v by %+v, want the newer paid=100 at %v", got.Weights, got.Writer, t2)
	}
	wantSplit(t, n, split(0, 100, 0))

	applyAndWait(t, n, a, stamped(100, 0, 0, "hermes-b", t1))
	if got := writerOf(t, a); got.Weights["free"] != 100 || got.Writer.Replica != "hermes-b" {
		t.Errorf("another replica's write: nginx serves %v by %+v, want free=100 by hermes-b", got.Weights, got.Writer)
	}
	wantSplit(t, n, split(100, 0, 0))
}
