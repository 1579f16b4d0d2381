package unleash

import (
	"context"
	"maps"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/actuators"
)

// TestLostReplyIsReconciled: a write whose reply never came (Unleash
// applied it, the actuator timed out) is an error, an unknown outcome; the
// next Apply reads what Unleash serves and converges without a duplicate
// strategy, and Current reads the served split. A strategy changed behind
// Hermes's back is seen by Current and repaired by the next Apply.
func TestLostReplyIsReconciled(t *testing.T) {
	s := unleashServer(t)
	p := newRecordingProxy(t, s.URL)
	flags := testFlags("chat")
	opts := map[string]any{"url": p.URL, "admin_token": s.AdminToken, "environment": s.Environment, "flags": flags, "timeout": "3s"}
	a := newActuator(t, opts, "chat")
	ctx := context.Background()
	healthy := actuators.Splits{"chat": {Weights: map[string]int{"free": 100, "paid": 0}, RetriesEnabled: true}}
	failed := actuators.Splits{"chat": {Weights: map[string]int{"free": 0, "paid": 100}}}
	if err := a.Apply(ctx, healthy); err != nil {
		t.Fatal(err)
	}
	p.takeWrites()
	p.lose.Store(true)
	if err := a.Apply(ctx, failed); err == nil {
		t.Fatal("Apply without a reply succeeded")
	}
	p.lose.Store(false)
	routes := a.flags("chat").Routes
	eventually(t, 10*time.Second, func() error { return sdkSplit(t, s, routes, map[string]int{"free": 0, "paid": 1000}) })
	want := func(w map[string]int) {
		t.Helper()
		cur, err := a.Current(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !maps.Equal(cur["chat"].Weights, w) {
			t.Errorf("Current %v, want what Unleash serves %v", cur["chat"].Weights, w)
		}
	}
	want(failed["chat"].Weights)
	p.takeWrites()
	if err := a.Apply(ctx, failed); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, func() error { return sdkSplit(t, s, routes, map[string]int{"free": 0, "paid": 1000}) })

	// Behind Hermes's back: another writer puts the healthy split back.
	direct := newActuator(t, map[string]any{"url": s.URL, "admin_token": s.AdminToken, "environment": s.Environment, "flags": flags}, "chat")
	if err := direct.Apply(ctx, healthy); err != nil {
		t.Fatal(err)
	}
	want(healthy["chat"].Weights)
	if err := a.Apply(ctx, failed); err != nil {
		t.Fatal(err)
	}
	want(failed["chat"].Weights)
	eventually(t, 10*time.Second, func() error { return sdkSplit(t, s, routes, map[string]int{"free": 0, "paid": 1000}) })
}
