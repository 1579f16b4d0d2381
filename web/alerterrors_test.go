package web

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/promapi"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/runner"
	"github.com/hermes-failover/hermes/web/api"
)

// TestStatusShowsAlertExpressionErrors runs the live loop (1 s ticks) with
// the shipped policy plus an alert whose expression divides by zero at run
// time: the status API names the alert, its error, the route it failed on
// and that the last tick failed, and the status page shows the same.
func TestStatusShowsAlertExpressionErrors(t *testing.T) {
	dir := t.TempDir()
	cfg := strings.Replace(string(rules.DefaultYAML), "alerts:\n", "alerts:\n  - {name: HermesBroken, tier: B, expr: 'route != \"route\" && 1 % stage == 0 || score < 0'}\n", 1)
	cfg = strings.Replace(cfg, "evaluation_interval: 15s", "evaluation_interval: 1s", 1)
	cfg = strings.Replace(cfg, "query_timeout: 10s", "query_timeout: 500ms", 1)
	cfgPath := filepath.Join(dir, "hermes.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	nothing := func(context.Context, string, time.Time) (model.Vector, error) { return model.Vector{}, nil }
	r, err := runner.New(runner.Options{ConfigPath: cfgPath, Registerer: prometheus.NewRegistry(),
		NewQuery: func(*config.Config, *slog.Logger) (promapi.QueryFunc, error) { return nothing, nil }})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Go(t, func(ctx context.Context) { _ = r.Run(ctx) })
	srv := httptest.NewServer(Handler(Options{Loop: Live(r), Gatherer: prometheus.NewRegistry()}))
	t.Cleanup(srv.Close)

	var st api.Status
	testenv.Eventually(t, 30*time.Second, "alert_errors in /api/v1/status", func() bool {
		code, body := do(t, "GET", srv.URL+"/api/v1/status", "", "")
		st = api.Status{}
		return code == 200 && json.Unmarshal([]byte(body), &st) == nil && len(st.AlertErrors) > 0 && st.AlertErrors[0].Failing
	})
	e := st.AlertErrors[0]
	if len(st.AlertErrors) != 1 || e.Alert != "HermesBroken" || !strings.Contains(e.Error, "divide by zero") ||
		e.Service != "chat" || e.Route == "" || e.Count < 1 || e.At.Before(e.Since) || !e.At.Equal(st.LastTick) {
		t.Errorf("alert_errors = %+v; want HermesBroken's division by zero on a route of chat, failing at the last tick %s", st.AlertErrors, st.LastTick)
	}
	code, page := do(t, "GET", srv.URL+"/", "", "")
	if code != 200 {
		t.Fatalf("page: %d", code)
	}
	section := page[max(strings.Index(page, `id="alert-errors"`), 0):]
	if !strings.Contains(page, `id="alert-errors"`) || !strings.Contains(section, "<td>HermesBroken</td>") || !strings.Contains(section, "divide by zero") {
		t.Errorf("the status page does not show the failing alert expression:\n%s", section)
	}
}
