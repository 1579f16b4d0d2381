package runner

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/alertmanager/api/v2/models"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/promapi"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
)

// TestRunSendsAlertsToEveryAlertmanager runs the live loop in real time
// (1s ticks) against two Alertmanager API stubs and checks the failover
// page reaches both, with the Prometheus-style endsAt.
func TestRunSendsAlertsToEveryAlertmanager(t *testing.T) {
	ams := []*testenv.FakeAlertmanager{testenv.NewFakeAlertmanager(t), testenv.NewFakeAlertmanager(t)}
	cfg := string(rules.DefaultYAML)
	cfg = strings.Replace(cfg, "evaluation_interval: 15s", "evaluation_interval: 1s", 1)
	cfg = strings.Replace(cfg, "query_timeout: 10s", "query_timeout: 500ms", 1)
	cfg += "\nalerting:\n  external_url: http://hermes.test:9797\n  alertmanagers:\n    - url: " + ams[0].URL + "\n    - url: " + ams[1].URL + "\n"
	path := filepath.Join(t.TempDir(), "hermes.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	fp := &fakeProm{soft: 0.02}
	fp.mu.Lock()
	fp.hard = 0.9 // a hard outage: failover at the first tick, HermesRouteFailedOver fires at once
	fp.mu.Unlock()
	r, err := New(Options{ConfigPath: path, Registerer: prometheus.NewRegistry(),
		NewQuery: func(*config.Config, *slog.Logger) (promapi.QueryFunc, error) { return fp.query, nil }})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Go(t, func(ctx context.Context) { _ = r.Run(ctx) })

	for i, am := range ams {
		var page *models.PostableAlert
		testenv.Eventually(t, 20*time.Second, fmt.Sprintf("HermesRouteFailedOver at alertmanager %d", i), func() bool {
			for _, a := range am.Received() {
				if a.Labels["alertname"] == "HermesRouteFailedOver" {
					page = a
				}
			}
			return page != nil
		})
		if page.Labels["severity"] != "critical" || page.Labels["route"] != "free" || page.Labels["tier"] != "A" {
			t.Errorf("alertmanager %d: labels %v", i, page.Labels)
		}
		if !strings.HasPrefix(string(page.GeneratorURL), "http://hermes.test:9797/") {
			t.Errorf("generatorURL %q", page.GeneratorURL)
		}
		ends, starts := time.Time(page.EndsAt), time.Time(page.StartsAt)
		if ends.Sub(starts) < 3*time.Second {
			t.Errorf("endsAt %s should be about 4 intervals after the send (startsAt %s)", ends, starts)
		}
	}
}
