// Package actuatortest is the test suite every actuator backend passes:
// round trip, idempotent re-apply, changes taking effect, and failing
// cleanly (retryable, no secret in errors) while the backend is broken.
//
// A backend's test calls Run with a Harness:
//
//	actuatortest.Run(t, actuatortest.Harness{
//		New:     func(t *testing.T) actuators.Actuator { ... },
//		Changed: func(t *testing.T) bool { ... },
//	})
package actuatortest

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/traffic"
)

// Harness adapts one backend to the suite. Run calls New at the start of
// every subtest and the other hooks only after it, one subtest at a time,
// so the hooks may act on the backend the last New created.
type Harness struct {
	// New returns an actuator on a fresh, empty backend, handling (at least)
	// the services "chat" and "embed". Required.
	New func(t *testing.T) actuators.Actuator
	// Changed reports whether the backend was modified since the previous
	// call, or since New for the first call. Optional: without it the
	// no-op checks are skipped.
	Changed func(t *testing.T) bool
	// Break makes every Apply fail until Repair is called. Optional; when
	// set, Repair is required.
	Break  func(t *testing.T)
	Repair func(t *testing.T)
	// Secrets are strings (tokens, passwords) that must never appear in an
	// error message.
	Secrets []string
}

// Run runs the suite against h.
func Run(t *testing.T, h Harness) {
	t.Helper()
	if h.New == nil {
		t.Fatal("actuatortest: Harness.New is required")
	}
	if h.Break != nil && h.Repair == nil {
		t.Fatal("actuatortest: Harness.Break needs Harness.Repair")
	}
	t.Run("RoundTrip", h.roundTrip)
	t.Run("ReapplyIsNoop", h.reapplyIsNoop)
	t.Run("ReasonsOnlyIsNoop", h.reasonsOnlyIsNoop)
	t.Run("ChangedSplitTakesEffect", h.changedSplit)
	if h.Break != nil {
		t.Run("FailsWhileBrokenAndRecovers", h.failsAndRecovers)
	}
}

// Normal is every route at full weight, retries on.
func Normal() actuators.Splits {
	return actuators.Splits{
		"chat": {
			Weights:        map[string]int{"free": 100, "paid": 0},
			RetriesEnabled: true,
			Levels:         map[string]traffic.Level{"free": traffic.Normal, "paid": traffic.Normal},
		},
		"embed": {Weights: map[string]int{"embed-free": 100}, RetriesEnabled: true},
	}
}

// Shed moves half of chat to the paid route.
func Shed() actuators.Splits {
	d := Normal()
	d["chat"] = traffic.Split{
		Weights:        map[string]int{"free": 50, "paid": 50},
		RetriesEnabled: true,
		Levels:         map[string]traffic.Level{"free": traffic.Shed, "paid": traffic.Normal},
		Reasons:        []string{"free: score 72 < 75 for 2m"},
	}
	return d
}

// Failover moves chat to the paid route with retries off, and puts embed,
// whose only route is bad, in degraded mode.
func Failover() actuators.Splits {
	return actuators.Splits{
		"chat": {
			Weights: map[string]int{"free": 0, "paid": 100},
			Levels:  map[string]traffic.Level{"free": traffic.Failover, "paid": traffic.Normal},
			Reasons: []string{"free: score 41 < 60 for 1m"},
		},
		"embed": {
			Weights:  map[string]int{"embed-free": 100},
			Degraded: true,
			Levels:   map[string]traffic.Level{"embed-free": traffic.Failover},
			Reasons:  []string{"every route of embed is bad"},
		},
	}
}

func (h Harness) roundTrip(t *testing.T) {
	a := h.New(t)
	for _, want := range []actuators.Splits{Shed(), Failover(), Normal()} {
		h.apply(t, a, want)
		h.wantCurrent(t, a, want)
	}
}

func (h Harness) reapplyIsNoop(t *testing.T) {
	a := h.New(t)
	h.apply(t, a, Shed())
	h.wantChanged(t, true, "after the first Apply")
	h.apply(t, a, clone(Shed()))
	h.wantChanged(t, false, "after re-applying the same state")
	h.wantCurrent(t, a, Shed())
}

func (h Harness) reasonsOnlyIsNoop(t *testing.T) {
	a := h.New(t)
	h.apply(t, a, Shed())
	h.wantChanged(t, true, "after the first Apply")
	d := Shed()
	chat := d["chat"]
	chat.Reasons = []string{"free: score 70 < 75 for 3m"}
	chat.Levels = map[string]traffic.Level{"free": traffic.Shed}
	d["chat"] = chat
	h.apply(t, a, d)
	h.wantChanged(t, false, "after an Apply that changed only levels and reasons")
}

func (h Harness) changedSplit(t *testing.T) {
	a := h.New(t)
	h.apply(t, a, Normal())
	h.wantChanged(t, true, "after the first Apply")
	for _, want := range []actuators.Splits{Shed(), Failover(), Normal()} {
		h.apply(t, a, want)
		h.wantChanged(t, true, "after applying a different split")
		h.wantCurrent(t, a, want)
	}
}

func (h Harness) failsAndRecovers(t *testing.T) {
	a := h.New(t)
	h.apply(t, a, Normal())
	h.Break(t)
	err := a.Apply(context.Background(), Shed())
	if err == nil {
		t.Fatal("Apply on a broken backend: got nil error")
	}
	h.noSecret(t, "Apply", err)
	if _, err := a.Current(context.Background()); err != nil {
		h.noSecret(t, "Current", err)
	}
	h.Repair(t)
	// The next tick re-asserts the same state: it must go through.
	h.apply(t, a, Shed())
	h.wantCurrent(t, a, Shed())
}

func (h Harness) apply(t *testing.T, a actuators.Actuator, d actuators.Splits) {
	t.Helper()
	if err := a.Apply(context.Background(), d); err != nil {
		h.noSecret(t, "Apply", err)
		t.Fatalf("Apply: %v", err)
	}
}

func (h Harness) wantCurrent(t *testing.T, a actuators.Actuator, want actuators.Splits) {
	t.Helper()
	got, err := a.Current(context.Background())
	if err != nil {
		h.noSecret(t, "Current", err)
		t.Fatalf("Current: %v", err)
	}
	for _, s := range sortedKeys(want) {
		g, ok := got[s]
		switch {
		case !ok:
			t.Errorf("Current: service %q missing", s)
		case !g.Equal(want[s]):
			t.Errorf("Current[%q] = %+v, want weights and flags of %+v", s, g, want[s])
		}
	}
	for _, s := range sortedKeys(got) {
		if _, ok := want[s]; !ok {
			t.Errorf("Current: unexpected service %q: %+v", s, got[s])
		}
	}
}

func (h Harness) wantChanged(t *testing.T, want bool, when string) {
	t.Helper()
	if h.Changed == nil {
		return
	}
	if got := h.Changed(t); got != want {
		t.Errorf("backend changed %s = %v, want %v", when, got, want)
	}
}

func (h Harness) noSecret(t *testing.T, op string, err error) {
	t.Helper()
	for _, s := range h.Secrets {
		if s != "" && strings.Contains(err.Error(), s) {
			t.Errorf("%s error reveals a secret: %v", op, err)
		}
	}
}

// clone deep-copies d, so that a backend cannot rely on map identity.
func clone(d actuators.Splits) actuators.Splits {
	out := actuators.Splits{}
	for k, s := range d {
		out[k] = s.Clone()
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}
