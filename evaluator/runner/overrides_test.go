package runner

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/actuators/file"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/evaluator/promapi"
	"github.com/hermes-failover/hermes/rules"
)

// TestOverridesFileWriteIsRetried: when the overrides file cannot be
// written, the pin holds and the write is retried every tick until it
// succeeds, so a restart does not lose it.
func TestOverridesFileWriteIsRetried(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.02}
		dir := t.TempDir()
		cfgPath := writeConfig(t, dir, filepath.Join(dir, "split.json"))
		missing := filepath.Join(dir, "not-yet")
		path := filepath.Join(missing, "overrides.json")
		kinds := &actuators.Registry{}
		file.Register(kinds)
		r, err := New(Options{ConfigPath: cfgPath, OverridesPath: path, Registerer: prometheus.NewRegistry(), Actuators: kinds,
			NewQuery: func(*rules.Config, *slog.Logger) (promapi.QueryFunc, error) { return fp.query, nil }})
		if err != nil {
			t.Fatal(err)
		}
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
