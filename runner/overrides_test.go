package runner

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/runner/persist"
)

// TestOverridesFileWriteIsRetried: when the overrides file cannot be
// written, the pin holds and the write is retried every tick until it
// succeeds, so a restart does not lose it.
func TestOverridesFileWriteIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.02}
		dir := t.TempDir()
		missing := filepath.Join(dir, "not-yet")
		path := filepath.Join(missing, "overrides.json")
		r, _ := newFileRunner(t, fp, dir, Options{OverridesPath: path})
		stop := start(t, r)
		defer stop()
		time.Sleep(20 * time.Second)
		synctest.Wait()
		if _, err := r.Submit(context.Background(), evaluator.Command{Kind: evaluator.CommandPin, Service: "chat", Route: "paid-premium", Reason: "launch"}); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(path); err == nil {
			t.Fatal("overrides file written into a directory that does not exist")
		}
		if err := os.Mkdir(missing, 0o755); err != nil {
			t.Fatal(err)
		}
		time.Sleep(15 * time.Second) // the next tick retries
		synctest.Wait()
		ov, err := loadOverrides(path)
		if err != nil {
			t.Fatal(err)
		}
		if o, ok := ov["chat"]; !ok || o.Route != "paid-premium" {
			t.Errorf("overrides file after the retry: %+v, want the pin", ov)
		}
	})
}

// loadOverrides reads the overrides of the local state file at path.
func loadOverrides(path string) (map[string]evaluator.Override, error) {
	l, err := persist.ReadLocal(path)
	return l.Overrides, err
}
