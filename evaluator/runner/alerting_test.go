package runner

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/alertmanager/api/v2/models"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/evaluator/promapi"
	"github.com/hermes-failover/hermes/rules"
)

// TestRunSendsAlertsToEveryAlertmanager runs the live loop in real time
// (1s ticks) against two Alertmanager API stubs and checks the failover
// page reaches both, with the Prometheus-style endsAt.
func TestRunSendsAlertsToEveryAlertmanager(t *testing.T) {
	type received struct {
		mu     sync.Mutex
		alerts []*models.PostableAlert
	}
	var ams [2]received
	urls := make([]string, 2)
	for i := range ams {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/api/v2/alerts" || r.Method != http.MethodPost {
				http.NotFound(w, r)
				return
			}
			var batch models.PostableAlerts
			if err := json.NewDecoder(r.Body).Decode(&batch); err != nil {
				t.Errorf("alertmanager %d: %v", i, err)
			}
			ams[i].mu.Lock()
			ams[i].alerts = append(ams[i].alerts, batch...)
			ams[i].mu.Unlock()
		}))
		t.Cleanup(srv.Close)
		urls[i] = srv.URL
	}
	cfg := string(rules.DefaultYAML)
	cfg = strings.Replace(cfg, "evaluation_interval: 15s", "evaluation_interval: 1s", 1)
	cfg = strings.Replace(cfg, "query_timeout: 10s", "query_timeout: 500ms", 1)
	cfg += "\nalerting:\n  external_url: http://hermes.test:9797\n  alertmanagers:\n    - url: " + urls[0] + "\n    - url: " + urls[1] + "\n"
	path := filepath.Join(t.TempDir(), "hermes.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	fp := &fakeProm{soft: 0.02}
	fp.mu.Lock()
	fp.hard = 0.9 // a hard outage: failover at the first tick, HermesRouteFailedOver fires at once
	fp.mu.Unlock()
	r, err := New(Options{ConfigPath: path, Registerer: prometheus.NewRegistry(),
		NewQuery: func(*rules.Config, *slog.Logger) (promapi.QueryFunc, error) { return fp.query, nil }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	defer func() { cancel(); <-done }()

	deadline := time.Now().Add(20 * time.Second)
	for i := range ams {
		for {
			ams[i].mu.Lock()
			var page *models.PostableAlert
			for _, a := range ams[i].alerts {
				if a.Labels["alertname"] == "HermesRouteFailedOver" {
					page = a
				}
			}
			ams[i].mu.Unlock()
			if page != nil {
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
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("alertmanager %d never got HermesRouteFailedOver", i)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}
}
