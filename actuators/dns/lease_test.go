package dns

import (
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/traffic"
)

// stamped is split(weights) written by replica at tick.
func stamped(weights map[string]int, replica string, tick time.Time) actuators.Splits {
	d := split(weights)
	s := d["chat"]
	s.Writer = traffic.Stamp{Replica: replica, Tick: tick}
	d["chat"] = s
	return d
}

// TestWriterStampRoundTrip: the writer's stamp Apply is given is in the
// flags TXT record the real knotd serves, and comes back from Current; a
// renewed stamp alone (the lease holder's next tick) is an update. With
// flags off there is no TXT record to carry it.
func TestWriterStampRoundTrip(t *testing.T) {
	k := startKnot(t)
	a := newActuator(t, options(k, map[string]any{"chat": chatSRV()}))
	if !a.CarriesStamp() {
		t.Fatal("CarriesStamp = false with flags on")
	}
	tick := time.Date(2026, 11, 30, 7, 12, 15, 0, time.UTC)
	mustApply(t, a, stamped(map[string]int{"free": 95, "paid": 5}, "hermes-a", tick))
	st := wantWeights(t, a, "chat", map[string]int{"free": 95, "paid": 5, "backup": 0})
	if !st.Writer.Equal(traffic.Stamp{Replica: "hermes-a", Tick: tick}) {
		t.Errorf("Current's stamp %+v, want hermes-a at %v", st.Writer, tick)
	}
	txt, err := k.lookup("_hermes-flags._chat._tcp.hermes.test.", dns.TypeTXT)
	if err != nil || len(txt) != 1 || !slices.Contains(txt[0].(*dns.TXT).Txt, "writer=hermes-a") {
		t.Errorf("flags TXT served by knotd = %v, %v; want one holding writer=hermes-a", txt, err)
	}

	renewed := tick.Add(15 * time.Second)
	before := mustSerial(t, k)
	mustApply(t, a, stamped(map[string]int{"free": 95, "paid": 5}, "hermes-a", renewed))
	if mustSerial(t, k) == before {
		t.Error("a renewed stamp was not written: the other replica would read an expired lease")
	}
	if st := wantWeights(t, a, "chat", map[string]int{"free": 95, "paid": 5, "backup": 0}); !st.Writer.Tick.Equal(renewed) {
		t.Errorf("after renewing, Current's stamp %+v, want the tick %v", st.Writer, renewed)
	}

	opts := options(k, map[string]any{"chat": chatSRV()})
	opts["flags"] = false
	if newActuator(t, opts).CarriesStamp() {
		t.Error("CarriesStamp = true with flags off: nothing would hold the stamp")
	}
}

// TestRelayedOlderStampKeepsTheNewer: the replica that defers writes back
// the holder's split as it read it, possibly a tick old. Such a relayed
// write, the same replica's stamp but older, must leave the holder's
// newer records; another replica's stamp (a lease that expired, or a
// person's pin) is written.
func TestRelayedOlderStampKeepsTheNewer(t *testing.T) {
	k := startKnot(t)
	a := newActuator(t, options(k, map[string]any{"chat": chatSRV()}))
	t1 := time.Date(2026, 11, 30, 7, 12, 15, 0, time.UTC)
	t2 := t1.Add(15 * time.Second)
	paid := map[string]int{"free": 0, "paid": 100, "backup": 0}
	mustApply(t, a, stamped(paid, "hermes-a", t2))

	before := mustSerial(t, k)
	mustApply(t, a, stamped(map[string]int{"free": 100}, "hermes-a", t1))
	if st := wantWeights(t, a, "chat", paid); !st.Writer.Tick.Equal(t2) {
		t.Errorf("after a relayed older write the stamp is %+v, want the newer one at %v", st.Writer, t2)
	}
	if mustSerial(t, k) != before {
		t.Error("a relayed older write changed the zone")
	}

	mustApply(t, a, stamped(map[string]int{"free": 100}, "hermes-b", t1))
	if st := wantWeights(t, a, "chat", map[string]int{"free": 100, "paid": 0, "backup": 0}); st.Writer.Replica != "hermes-b" {
		t.Errorf("another replica's write: stamp %+v, want hermes-b", st.Writer)
	}
}
