package integration

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/hermes-failover/hermes/internal/testenv"
)

// Alertmanager is a real Alertmanager whose one receiver, hermes, is a
// webhook in the test process.
type Alertmanager struct {
	*testenv.Alertmanager
	// Hooks records what it notified.
	Hooks *testenv.Webhook
}

// alertmanagerConfig routes every alert to the webhook, one group per
// alert, with timers of a second so that notifications follow the alerts
// closely; repeat_interval keeps a firing alert from being notified again.
const alertmanagerConfig = `route:
  receiver: hermes
  group_by: [alertname, service, route]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: hermes
    webhook_configs:
      - url: %s
        send_resolved: true
`

// StartAlertmanager starts Alertmanager on a free loopback port and waits
// until it is ready. It runs until the end of t.
func StartAlertmanager(t testing.TB) *Alertmanager {
	t.Helper()
	hooks := testenv.NewWebhook(t)
	cfg := filepath.Join(t.TempDir(), "alertmanager.yml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, alertmanagerConfig, hooks.URL), 0o644); err != nil {
		t.Fatal(err)
	}
	return &Alertmanager{Alertmanager: testenv.StartAlertmanager(t, cfg), Hooks: hooks}
}

// Notified lists, oldest first, the alert named alertname for route in
// every notification that held it.
func (am *Alertmanager) Notified(alertname, route string) []testenv.NotifiedAlert {
	return am.Hooks.Alerts("hermes", func(a testenv.NotifiedAlert) bool {
		return a.Labels["alertname"] == alertname && a.Labels["route"] == route
	})
}
