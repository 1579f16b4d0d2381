package runner

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/promapi"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/runner/auditlog"
)

// TestAlertExpressionErrorsAreCounted runs the shipped policy plus a rule
// that divides by zero at run time: each failed evaluation is counted in
// hermes_alert_eval_errors_total and logged, and the audit log does not
// get a line per tick for it. The rule divides by zero only on real
// routes, so that `hermes check`'s run on sample data (route "route")
// lets it load.
func TestAlertExpressionErrorsAreCounted(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.02}
		dir := t.TempDir()
		cfg := strings.Replace(string(rules.DefaultYAML), "alerts:\n", "alerts:\n  - {name: HermesBroken, tier: B, expr: 'route != \"route\" && 1 % stage == 0 || score < 0'}\n", 1)
		cfgPath := filepath.Join(dir, "hermes.yaml")
		if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
			t.Fatal(err)
		}
		reg := prometheus.NewRegistry()
		audit, logs := &testenv.Buffer{}, &testenv.Buffer{}
		r, err := New(Options{ConfigPath: cfgPath, Registerer: reg, Audit: auditlog.New(audit), Logger: slog.New(slog.NewTextHandler(logs, nil)),
			NewQuery: func(*config.Config, *slog.Logger) (promapi.QueryFunc, error) { return fp.query, nil }})
		if err != nil {
			t.Fatal(err)
		}
		stop := start(t, r)
		time.Sleep(time.Minute + time.Second) // four ticks
		synctest.Wait()
		stop()
		// Three routes a tick, four ticks.
		if got := testenv.Metric(t, reg, "hermes_alert_eval_errors_total", map[string]string{"alertname": "HermesBroken"}); got != 12 {
			t.Errorf("hermes_alert_eval_errors_total = %v, want 12", got)
		}
		if !strings.Contains(logs.String(), "alert expression failed") || !strings.Contains(logs.String(), "divide by zero") {
			t.Errorf("no log line for the failure:\n%s", logs.String())
		}
		if strings.Contains(audit.String(), "alert_error") {
			t.Error("alert evaluation errors are written to the audit log")
		}
	})
}
