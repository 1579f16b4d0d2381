package unleash

import (
	"context"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/traffic"
)

// stamped is chat's split (percentages) with the degraded toggle, written
// by replica at tick.
func stamped(weights map[string]int, degraded bool, replica string, tick time.Time) actuators.Splits {
	return actuators.Splits{"chat": {Weights: weights, Degraded: degraded, Writer: traffic.Stamp{Replica: replica, Tick: tick}}}
}

// chatOf is what a reads back for chat, failing t on an error.
func chatOf(t *testing.T, a *Actuator) traffic.Split {
	t.Helper()
	cur, err := a.Current(context.Background())
	if err != nil {
		t.Fatalf("Current: %v", err)
	}
	return cur["chat"]
}

// servedWriter is the writer parameter of chat's strategy as SDKs receive
// it from the client API.
func servedWriter(t *testing.T, s *server, flag string) string {
	t.Helper()
	f := clientFeatures(t, s)[flag]
	if len(f.Strategies) != 1 {
		return ""
	}
	return param(f.Strategies[0].Parameters, paramWriter)
}

// TestWriterStampRoundTrip: the writer's stamp Apply is given is stored
// in the real Unleash with the split and comes back from Current, read by
// another actuator (another replica's), so --replica accepts it
// (CheckStamps); a renewed stamp alone is one
// strategy PUT; a write without a stamp drops it.
func TestWriterStampRoundTrip(t *testing.T) {
	s := unleashServer(t)
	p := newRecordingProxy(t, s.URL)
	flags := testFlags("chat")
	opts := map[string]any{"url": p.URL, "admin_token": s.AdminToken, "environment": s.Environment, "flags": flags}
	a := newActuator(t, opts, "chat")
	if err := actuators.CheckStamps(nil, []actuators.Actuator{a}); err != nil {
		t.Fatalf("CheckStamps refuses the unleash actuator: %v", err)
	}
	other := newActuator(t, map[string]any{"url": s.URL, "admin_token": s.AdminToken, "environment": s.Environment, "flags": flags}, "chat")
	ctx := context.Background()
	tick := time.Date(2026, 11, 30, 7, 12, 15, 0, time.UTC)
	split := map[string]int{"free": 95, "paid": 5}
	if err := a.Apply(ctx, stamped(split, false, "hermes-a", tick)); err != nil {
		t.Fatal(err)
	}
	got := chatOf(t, other)
	if !got.Writer.Equal(traffic.Stamp{Replica: "hermes-a", Tick: tick}) || !maps.Equal(got.Weights, split) {
		t.Fatalf("Unleash holds %v by %+v, want %v by hermes-a at %v", got.Weights, got.Writer, split, tick)
	}
	routes := a.flags("chat").Routes
	eventually(t, 10*time.Second, func() error { return sdkSplit(t, s, routes, map[string]int{"free": 950, "paid": 50}) })
	if w := servedWriter(t, s, routes); w != "hermes-a" {
		t.Errorf("the client API serves the writer %q, want hermes-a", w)
	}

	p.takeWrites()
	renewed := tick.Add(15 * time.Second)
	if err := a.Apply(ctx, stamped(split, false, "hermes-a", renewed)); err != nil {
		t.Fatal(err)
	}
	if w := p.takeWrites(); len(w) != 1 || !strings.HasPrefix(w[0], "PUT ") || !strings.Contains(w[0], "/strategies/") {
		t.Errorf("renewing the stamp wrote %q, want one strategy PUT", w)
	}
	if got := chatOf(t, other); !got.Writer.Tick.Equal(renewed) || !maps.Equal(got.Weights, split) {
		t.Errorf("after renewing, Unleash holds %v by %+v, want %v at %v", got.Weights, got.Writer, split, renewed)
	}
	if err := a.Apply(ctx, stamped(split, false, "hermes-a", renewed)); err != nil {
		t.Fatal(err)
	}
	if w := p.takeWrites(); len(w) != 0 {
		t.Errorf("re-applying the same stamp wrote %q", w)
	}

	if err := a.Apply(ctx, actuators.Splits{"chat": {Weights: split}}); err != nil {
		t.Fatal(err)
	}
	if got := chatOf(t, other); !got.Writer.IsZero() {
		t.Errorf("after an unstamped write Unleash still holds the stamp %+v", got.Writer)
	}
}

// TestRelayedOlderStampKeepsTheNewer: the replica that defers writes back
// the holder's split as it read it, possibly a tick old. Such a relayed
// write, the same replica's stamp but older, must leave the holder's
// newer split, toggles and stamp in Unleash, writing nothing; another
// replica's stamp (a lease that expired, or a person's pin) is written.
func TestRelayedOlderStampKeepsTheNewer(t *testing.T) {
	s := unleashServer(t)
	p := newRecordingProxy(t, s.URL)
	opts := map[string]any{"url": p.URL, "admin_token": s.AdminToken, "environment": s.Environment, "flags": testFlags("chat")}
	a := newActuator(t, opts, "chat")
	ctx := context.Background()
	t1 := time.Date(2026, 11, 30, 7, 12, 15, 0, time.UTC)
	t2 := t1.Add(15 * time.Second)
	paid := map[string]int{"free": 0, "paid": 100}
	free := map[string]int{"free": 100, "paid": 0}
	if err := a.Apply(ctx, stamped(paid, true, "hermes-a", t2)); err != nil {
		t.Fatal(err)
	}
	p.takeWrites()

	if err := a.Apply(ctx, stamped(free, false, "hermes-a", t1)); err != nil {
		t.Fatalf("relayed Apply: %v", err)
	}
	if w := p.takeWrites(); len(w) != 0 {
		t.Errorf("a relayed older write wrote %q", w)
	}
	if got := chatOf(t, a); !maps.Equal(got.Weights, paid) || !got.Degraded || !got.Writer.Tick.Equal(t2) {
		t.Errorf("after a relayed older write Unleash holds %v (degraded %v) by %+v, want the newer paid=100, degraded, at %v",
			got.Weights, got.Degraded, got.Writer, t2)
	}
	routes := a.flags("chat").Routes
	eventually(t, 10*time.Second, func() error { return sdkSplit(t, s, routes, map[string]int{"free": 0, "paid": 1000}) })

	if err := a.Apply(ctx, stamped(free, false, "hermes-b", t1)); err != nil {
		t.Fatal(err)
	}
	if got := chatOf(t, a); !maps.Equal(got.Weights, free) || got.Degraded || got.Writer.Replica != "hermes-b" {
		t.Errorf("another replica's write: Unleash holds %v (degraded %v) by %+v, want free=100 by hermes-b", got.Weights, got.Degraded, got.Writer)
	}
	eventually(t, 10*time.Second, func() error { return sdkSplit(t, s, routes, map[string]int{"free": 1000, "paid": 0}) })
}
