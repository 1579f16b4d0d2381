package runner

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/internal/benchfleet"
	"github.com/hermes-failover/hermes/promapi"
	"github.com/hermes-failover/hermes/rules/config"
)

// fleetConfig writes the shipped configuration with routes routes.
func fleetConfig(t *testing.T, routes int) string {
	t.Helper()
	src, err := benchfleet.ConfigYAML(routes)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "hermes.yaml")
	if err := os.WriteFile(path, src, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestQueriesPerTickDoNotGrowWithRoutes counts the signal queries of live
// ticks: exactly one per signal and tick (its evidence travels in the same
// query), whether the fleet has 3 or 10,000 routes.
func TestQueriesPerTickDoNotGrowWithRoutes(t *testing.T) {
	for _, routes := range []int{3, 10000} {
		t.Run(fmt.Sprintf("routes=%d", routes), func(t *testing.T) {
			cfgPath := fleetConfig(t, routes)
			synctest.Test(t, func(t *testing.T) {
				var mu sync.Mutex
				perTick := map[time.Time]int{}
				query := func(_ context.Context, q string, ts time.Time) (model.Vector, error) {
					if strings.Contains(q, "hermes_") {
						return model.Vector{}, nil // restore: nothing saved
					}
					mu.Lock()
					perTick[ts]++
					mu.Unlock()
					v := make(model.Vector, 0, routes)
					for i := range routes {
						v = append(v, &model.Sample{Metric: model.Metric{"route": model.LabelValue(benchfleet.Route(i))}, Value: 1})
					}
					return v, nil
				}
				r, err := New(Options{ConfigPath: cfgPath, Registerer: prometheus.NewRegistry(),
					NewQuery: func(*config.Config, *slog.Logger) (promapi.QueryFunc, error) { return query, nil }})
				if err != nil {
					t.Fatal(err)
				}
				stop := start(t, r)
				time.Sleep(time.Minute)
				synctest.Wait()
				stop()
				signals := len(r.cfg.Signals)
				mu.Lock()
				defer mu.Unlock()
				if len(perTick) < 3 {
					t.Fatalf("%d ticks in a minute, want at least 3", len(perTick))
				}
				for ts, n := range perTick {
					if n != signals {
						t.Errorf("tick %s: %d queries, want %d (one per signal)", ts.Format(time.TimeOnly), n, signals)
					}
				}
			})
		})
	}
}
