package nginx

import (
	"context"
	"testing"

	"github.com/hermes-failover/hermes/internal/testenv"
)

// TestCrashBeforeReloadIsReconciled: Hermes wrote the include file of a
// failover and died before the reload (here: a reload command that does
// nothing), so nginx still serves the old split. Current must report what
// nginx serves (state_listen), not the file, and the next Hermes's first
// Apply of the same state must reload although no file changes.
func TestCrashBeforeReloadIsReconciled(t *testing.T) {
	n := startNginx(t)
	opts := with(n.options(), chatUpstreams(t, ""), "state_listen", testenv.FreeAddr(t))
	a := newActuator(t, opts)
	applyAndWait(t, n, a, split(100, 0, 0))
	if got, err := a.Current(context.Background()); err != nil || got["chat"].Weights["free"] != 100 {
		t.Fatalf("served after the first apply: %v %v", got, err)
	}

	crashing := newActuator(t, with(opts, opts["upstreams"].(map[string]any), "reload_args", []any{"-v"}))
	if err := crashing.Apply(context.Background(), split(0, 100, 0)); err == nil {
		t.Log("the crashing apply reported success (its reload did nothing)")
	}
	wantSplit(t, n, split(100, 0, 0)) // the file says paid, nginx serves free

	restarted := newActuator(t, opts)
	got, err := restarted.Current(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if w := got["chat"].Weights; w["free"] != 100 {
		t.Errorf("Current after the crash = %v, want what nginx serves (free=100), not the include file", w)
	}
	applyAndWait(t, n, restarted, split(0, 100, 0))
	wantSplit(t, n, split(0, 100, 0))
	if got, err := restarted.Current(context.Background()); err != nil || got["chat"].Weights["paid"] != 100 {
		t.Errorf("served after the reconciling apply: %v %v", got, err)
	}
}

// TestRestartReloadsOnceWithoutStateListen: without state_listen Hermes
// cannot see what nginx serves, so a new actuator tests and reloads at its
// first Apply even when the files already hold the state (a crash may
// have come between write and reload), and not again after.
func TestRestartReloadsOnceWithoutStateListen(t *testing.T) {
	n := startNginx(t)
	opts := with(n.options(), chatUpstreams(t, ""))
	crashing := newActuator(t, with(opts, opts["upstreams"].(map[string]any), "reload_args", []any{"-v"}))
	_ = crashing.Apply(context.Background(), split(100, 0, 0))
	_ = crashing.Apply(context.Background(), split(0, 100, 0))

	restarted := newActuator(t, opts)
	applyAndWait(t, n, restarted, split(0, 100, 0))
	wantSplit(t, n, split(0, 100, 0))
	reloads := n.reloads()
	if err := restarted.Apply(context.Background(), split(0, 100, 0)); err != nil {
		t.Fatal(err)
	}
	if r := n.reloads(); r != reloads {
		t.Errorf("reloaded again for an unchanged state: %d reloads, want %d", r, reloads)
	}
}
