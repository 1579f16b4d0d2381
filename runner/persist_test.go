package runner

import (
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hermes-failover/hermes/runner/persist"
)

// TestStateFileOldNameIsRead: an upgrade from a version that kept the
// local state file as hermes-overrides.json keeps its overrides, and the
// first tick saves them as hermes-state.json, which wins from then on.
func TestStateFileOldNameIsRead(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.02}
		dir := t.TempDir()
		old := filepath.Join(dir, "hermes-overrides.json")
		pin := `{"overrides":{"chat":{"kind":"pin","route":"paid-premium","reason":"launch","by":"alice"}}}`
		if err := os.WriteFile(old, []byte(pin), 0o644); err != nil {
			t.Fatal(err)
		}
		r, _ := newFileRunner(t, fp, dir, Options{})
		if want := filepath.Join(dir, "hermes-state.json"); r.opts.OverridesPath != want {
			t.Fatalf("state file %s, want %s", r.opts.OverridesPath, want)
		}
		stop := start(t, r)
		time.Sleep(20 * time.Second)
		synctest.Wait()
		stop()
		if o, ok := r.View().State.Overrides["chat"]; !ok || o.Route != "paid-premium" {
			t.Errorf("overrides after the restart: %+v, want the pin of the old file", r.View().State.Overrides)
		}
		saved, err := persist.ReadLocal(r.opts.OverridesPath)
		if err != nil {
			t.Fatal(err)
		}
		if o, ok := saved.Overrides["chat"]; !ok || o.Route != "paid-premium" {
			t.Errorf("the new state file holds %+v, want the pin", saved.Overrides)
		}
		// From now on the new file wins over the old one.
		if err := os.WriteFile(old, []byte(`{"overrides":{}}`), 0o644); err != nil {
			t.Fatal(err)
		}
		r2, _ := newFileRunner(t, fp, dir, Options{})
		stop = start(t, r2)
		time.Sleep(15 * time.Second)
		synctest.Wait()
		stop()
		if _, ok := r2.View().State.Overrides["chat"]; !ok {
			t.Error("the old file's content won over the new file's")
		}
	})
}
