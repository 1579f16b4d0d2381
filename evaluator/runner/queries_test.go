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

	"github.com/hermes-failover/hermes/evaluator/promapi"
	"github.com/hermes-failover/hermes/rules"
)

// fleetConfig is the shipped configuration with routes routes, in
// services of 4.
func fleetConfig(t *testing.T, routes int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString("services:\n")
	for i := range routes {
		if i%4 == 0 {
			fmt.Fprintf(&b, "  - name: svc%d\n    routes: [", i/4)
		}
		fmt.Fprintf(&b, "r%d", i)
		if i%4 == 3 || i == routes-1 {
			b.WriteString("]\n")
		} else {
			b.WriteString(", ")
		}
	}
	src := string(rules.DefaultYAML)
	i := strings.Index(src, "\nservices:\n")
	j := strings.Index(src, "\nalerts:\n")
	if i < 0 || j < i {
		t.Fatal("rules.DefaultYAML has no services section before alerts")
	}
	path := filepath.Join(t.TempDir(), "hermes.yaml")
	if err := os.WriteFile(path, []byte(src[:i+1]+b.String()+src[j:]), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestQueriesPerTickDoNotGrowWithRoutes counts the signal queries of live
// ticks: one per signal and tick, whether the fleet has 3 or 10,000 routes.
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
						v = append(v, &model.Sample{Metric: model.Metric{"route": model.LabelValue(fmt.Sprintf("r%d", i))}, Value: 1})
					}
					return v, nil
				}
				r, err := New(Options{ConfigPath: cfgPath, Registerer: prometheus.NewRegistry(),
					NewQuery: func(*rules.Config, *slog.Logger) (promapi.QueryFunc, error) { return query, nil }})
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
						t.Errorf("tick %s: %d signal queries, want %d (one per signal)", ts.Format(time.TimeOnly), n, signals)
					}
				}
			})
		})
	}
}
