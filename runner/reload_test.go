package runner

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/actuators/file"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/promapi"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/runner/auditlog"
)

// TestReloadFloodNeitherDelaysTicksNorFloodsTheAudit sends reload requests
// without pause from 20 clients for two minutes while each load takes
// 300 ms (building the query side and the actuators can do I/O): every
// tick must still run at its slot, the loads must be coalesced and
// rate-limited, every request counted, and the audit log must get one line
// per applied reload.
func TestReloadFloodNeitherDelaysTicksNorFloodsTheAudit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.02}
		dir := t.TempDir()
		cfgPath := writeConfig(t, dir, dir+"/split.json")
		kinds := &actuators.Registry{}
		file.Register(kinds)
		reg := prometheus.NewRegistry()
		audit := &testenv.Buffer{}
		slowLoad := func(*config.Config, *slog.Logger) (promapi.QueryFunc, error) {
			time.Sleep(300 * time.Millisecond)
			return fp.query, nil
		}
		r, err := New(Options{ConfigPath: cfgPath, Registerer: reg, Actuators: kinds, Audit: auditlog.New(audit), NewQuery: slowLoad})
		if err != nil {
			t.Fatal(err)
		}
		start(t, r)
		time.Sleep(16 * time.Second)
		synctest.Wait()

		var requests atomic.Int64
		until := time.Now().Add(2 * time.Minute)
		var wg sync.WaitGroup
		for range 20 {
			wg.Go(func() {
				for time.Now().Before(until) {
					requests.Add(1)
					if err := r.Reload(t.Context()); err != nil {
						if t.Context().Err() == nil {
							t.Errorf("reload: %v", err)
						}
						return
					}
				}
			})
		}
		// Every tick of the two minutes runs at its slot.
		for time.Now().Before(until) {
			time.Sleep(15 * time.Second)
			synctest.Wait()
			if want := time.Now().Truncate(15 * time.Second); !status(r).LastTick.Equal(want) {
				t.Fatalf("at %s the last tick is %s, want %s: reloads delay ticks", time.Now(), status(r).LastTick, want)
			}
		}
		wg.Wait()
		if skipped := metricValue(t, reg, "hermes_ticks_skipped_total"); skipped != 0 {
			t.Errorf("ticks skipped: %v", skipped)
		}
		got := metricValue(t, reg, "hermes_config_reload_requests_total")
		if got != float64(requests.Load()) {
			t.Errorf("reload requests counted %v, sent %d", got, requests.Load())
		}
		applied := testenv.Metric(t, reg, "hermes_config_reloads_total", map[string]string{"result": "success"}) - 1 // the start-up load
		// One load per second at most, and each takes 0.3 s.
		if max := (2*time.Minute + 2*time.Second).Seconds() / 1.0; applied > max || applied < 2 {
			t.Errorf("%v reloads applied in two minutes, want 2..%v (one per second at most)", applied, max)
		}
		if applied*5 > float64(requests.Load()) {
			t.Errorf("%v applied for %d requests: not coalesced", applied, requests.Load())
		}
		if lines := strings.Count(audit.String(), `"type":"reload"`); float64(lines) != applied {
			t.Errorf("%d reload lines in the audit log for %v applied reloads (%d requests)", lines, applied, requests.Load())
		}
	})
}

// TestViewKeepsARejectedReload: a rejected reload stays in the view, with
// its error and how many were rejected in a row, until a reload succeeds
// (issue 34: the page's header still said "loaded …" after two rejected
// reloads).
func TestViewKeepsARejectedReload(t *testing.T) {
	dir := t.TempDir()
	r, _ := newFileRunner(t, &fakeProm{soft: 0.02}, dir, Options{})
	start(t, r)
	path := filepath.Join(dir, "hermes.yaml")
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if f := r.View().ReloadFailure; f != nil {
		t.Fatalf("a failure before any reload: %+v", f)
	}
	if err := os.WriteFile(path, []byte("global: {evaluation_interval: soon}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := r.Reload(t.Context()); err == nil {
			t.Fatal("a bad configuration reloaded")
		}
	}
	f := r.View().ReloadFailure
	if f == nil || f.Count != 2 || !strings.Contains(f.Error, "evaluation_interval") || f.Since.After(f.At) {
		t.Fatalf("after two rejected reloads the view keeps %+v", f)
	}
	if err := os.WriteFile(path, good, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := r.Reload(t.Context()); err != nil {
		t.Fatal(err)
	}
	if f := r.View().ReloadFailure; f != nil {
		t.Errorf("a good reload left the failure %+v", f)
	}
}
