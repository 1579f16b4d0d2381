package testenv

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/prometheus/alertmanager/api/v2/models"
)

// TestAlertmanager posts an alert to a real Alertmanager, finds it in the
// v2 API and at the webhook, and restarts Alertmanager (which forgets its
// alerts) on the same address.
func TestAlertmanager(t *testing.T) {
	hooks := NewWebhook(t)
	cfg := filepath.Join(t.TempDir(), "alertmanager.yml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, `route: {receiver: test, group_wait: 0s, group_interval: 1s, repeat_interval: 1h}
receivers: [{name: test, webhook_configs: [{url: %q}]}]
`, hooks.URL), 0o644); err != nil {
		t.Fatal(err)
	}
	am := StartAlertmanager(t, cfg)
	starts := time.Now().Add(-time.Minute).Truncate(time.Second)
	alert := models.PostableAlerts{{
		Alert:    models.Alert{Labels: models.LabelSet{"alertname": "TestenvAlert", "route": "free"}, GeneratorURL: "http://hermes.test/"},
		StartsAt: strfmt.DateTime(starts),
		EndsAt:   strfmt.DateTime(time.Now().Add(time.Hour)),
	}}
	am.PostAlerts(t, alert)
	held := func() bool {
		as := am.Alerts(t, "TestenvAlert")
		return len(as) == 1 && as[0].Status.State == "active" && as[0].StartsAt.Equal(starts) && as[0].Labels["route"] == "free"
	}
	Eventually(t, 30*time.Second, "the alert held", held)
	Eventually(t, 30*time.Second, "the alert notified", func() bool {
		n, ok := hooks.First("test", func(a NotifiedAlert) bool { return a.Labels["alertname"] == "TestenvAlert" })
		return ok && n.Status == "firing" && n.Alerts[0].GeneratorURL == "http://hermes.test/"
	})
	if got := am.Alerts(t, "OtherAlert"); len(got) != 0 {
		t.Errorf("alerts named OtherAlert: %v", got)
	}
	url := am.URL
	am.Stop(t)
	am.Start(t)
	if am.URL != url || am.Process().Exited() {
		t.Fatalf("restarted at %s (exited %v), want at %s", am.URL, am.Process().Exited(), url)
	}
	am.PostAlerts(t, alert)
	Eventually(t, 30*time.Second, "the alert held after a restart", held)
}
