// Package alertmanager tests Hermes's alerts end to end against a real
// Alertmanager (the Debian package prometheus-alertmanager) loaded with the
// shipped example configuration, rules/alertmanager/alertmanager.yml.
package alertmanager

import (
	"context"
	"log/slog"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/runner/alerting"
)

// TestShippedConfig checks the example with amtool, and where each tier goes.
func TestShippedConfig(t *testing.T) {
	amtool := testenv.Binary(t, "amtool")
	if out, err := exec.Command(amtool, "check-config", shippedConfig).CombinedOutput(); err != nil {
		t.Fatalf("amtool check-config: %v\n%s", err, out)
	}
	for labels, want := range map[string]string{
		"alertname=HermesRouteFailedOver severity=critical tier=A service=chat route=free":            "hermes-pager",
		"alertname=HermesRouteScoreDegraded severity=warning tier=B service=chat route=free":          "hermes-ticket",
		"alertname=HermesWarmStageInUse severity=info tier=C service=chat route=free":                 "hermes-info",
		"alertname=HostDown severity=critical":                                                        "null", // not Hermes's
		"alertname=HermesRouteFailedOver severity=critical tier=A service=chat route=free drill=true": "hermes-drills",
	} {
		args := append([]string{"config", "routes", "test", "--config.file=" + shippedConfig}, strings.Fields(labels)...)
		out, err := exec.Command(amtool, args...).Output()
		if err != nil {
			t.Fatalf("amtool config routes test %s: %v", labels, err)
		}
		if got := strings.TrimSpace(string(out)); got != want {
			t.Errorf("%s goes to %s, want %s", labels, got, want)
		}
	}
}

// TestTieredAlerts drives a route through warm → shed → failover →
// recovery and checks what each receiver of the shipped configuration got
// from a real Alertmanager: C at info, B at ticket, then A at pager, B
// muted while A fires, and A's resolve — sent while Alertmanager was down
// for a minute, delivered once it is back.
func TestTieredAlerts(t *testing.T) {
	hooks := testenv.NewWebhook(t)
	am := testenv.StartAlertmanager(t, testConfig(t, hooks.URL, timings{groupWait: "1s", groupInterval: "2s", repeatInterval: "1m"}))

	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))
	reg := prometheus.NewRegistry()
	sender, err := alerting.New(config.AlertingConfig{
		Alertmanagers: []config.AlertmanagerConfig{{URL: am.URL, Timeout: 2 * time.Second}},
		ExternalURL:   "http://hermes.test:9797",
	}, time.Second, reg, logger)
	if err != nil {
		t.Fatal(err)
	}
	d := &driver{p: policy(t), sender: sender, log: logger}
	// Both stop before Alertmanager does.
	testenv.Go(t, sender.Run)
	testenv.Go(t, func(ctx context.Context) { d.run(ctx, time.Second) })

	const (
		pager, ticket, info = "hermes-pager", "hermes-ticket", "hermes-info"
		a, b, c             = "HermesRouteFailedOver", "HermesRouteScoreDegraded", "HermesWarmStageInUse"
	)
	notified := func(receiver, alertname, level, status string) func() bool {
		return func() bool { _, ok := first(hooks, receiver, alertname, level, status); return ok }
	}

	t.Log("warm: C goes to the info receiver")
	d.set(warm)
	testenv.Eventually(t, 30*time.Second, "C at "+info, notified(info, c, "", "firing"))

	t.Log("shed: B goes to the ticket receiver")
	d.set(degraded)
	testenv.Eventually(t, 30*time.Second, "B at "+ticket, notified(ticket, b, "shed", "firing"))

	t.Log("failover: A pages")
	d.set(failing)
	testenv.Eventually(t, 30*time.Second, "A at "+pager, notified(pager, a, "", "firing"))
	n, _ := first(hooks, pager, a, "", "firing")
	for _, al := range n.Alerts {
		if al.Labels["alertname"] != a {
			continue
		}
		for k, v := range map[string]string{"severity": "critical", "tier": "A", "service": "chat", "route": "free", "level": "failover"} {
			if al.Labels[k] != v {
				t.Errorf("A label %s = %q, want %q (labels %v)", k, al.Labels[k], v, al.Labels)
			}
		}
		if al.GeneratorURL != "http://hermes.test:9797/#route-free" {
			t.Errorf("A generatorURL = %q", al.GeneratorURL)
		}
		if al.Annotations["summary"] == "" || !strings.HasPrefix(al.Annotations["description"], "score 50.0, level failover") ||
			al.Annotations["runbook_url"] != "https://runbooks.example.com/hermes/failed-over" {
			t.Errorf("A annotations = %v", al.Annotations)
		}
	}

	t.Log("degraded while failed over: B fires under A and is inhibited")
	d.set(degraded)
	testenv.Eventually(t, 30*time.Second, "B inhibited in Alertmanager", func() bool {
		for _, al := range am.Alerts(t, b) {
			if al.Labels["level"] == "failover" && al.Status.State == "suppressed" && len(al.Status.InhibitedBy) > 0 {
				return true
			}
		}
		return false
	})
	time.Sleep(5 * time.Second) // past group_wait and group_interval: an uninhibited B would have gone out
	if n, ok := first(hooks, ticket, b, "failover", "firing"); ok {
		t.Errorf("B was notified while A fired for the same route: %s", n)
	}
	if got := am.Alerts(t, a); len(got) != 1 || got[0].Status.State != "active" {
		t.Fatalf("A in Alertmanager before the outage: %d alerts, want 1 active", len(got))
	}

	t.Log("Alertmanager away for a minute; the route recovers meanwhile")
	am.Stop(t)
	down := time.Now()
	d.set(healthy)
	testenv.Eventually(t, 30*time.Second, "A resolved in Hermes", func() bool {
		as := d.alert(a)
		return as != nil && as.State == evaluator.StateInactive
	})
	testenv.Eventually(t, 30*time.Second, "failed sends counted", func() bool { return sum(t, reg, "hermes_alertmanager_errors_total") > 0 })
	time.Sleep(time.Until(down.Add(time.Minute)))
	am.Start(t)
	testenv.Eventually(t, 60*time.Second, "A's resolve at "+pager, notified(pager, a, "", "resolved"))
	testenv.Eventually(t, 10*time.Second, "A resolved in Alertmanager", func() bool { return len(am.Alerts(t, a)) == 0 })
	if got := sum(t, reg, "hermes_alerts_dropped_total"); got != 0 {
		t.Errorf("hermes_alerts_dropped_total = %g, want 0", got)
	}

	t.Log("what each receiver got")
	firstB, _ := first(hooks, ticket, b, "shed", "firing")
	firstA, _ := first(hooks, pager, a, "", "firing")
	if !firstB.Received.Before(firstA.Received) {
		t.Errorf("B reached %s at %s, not before A reached %s at %s", ticket, firstB.Received, pager, firstA.Received)
	}
	pages := hooks.Notifications(pager)
	for _, n := range pages {
		for _, al := range n.Alerts {
			if al.Labels["severity"] != "critical" {
				t.Errorf("%s got %s (severity %s)", pager, al.Labels["alertname"], al.Labels["severity"])
			}
		}
	}
	if last := pages[len(pages)-1]; last.Status != "resolved" {
		t.Errorf("last page is %s (%s), want A's resolve", last.Status, last)
	}
	for _, n := range hooks.Notifications(ticket) {
		for _, al := range n.Alerts {
			if al.Labels["severity"] != "warning" {
				t.Errorf("%s got %s (severity %s)", ticket, al.Labels["alertname"], al.Labels["severity"])
			}
		}
	}
	for _, n := range hooks.Notifications(info) {
		if n.Status != "firing" {
			t.Errorf("%s got a %s notification (send_resolved: false): %s", info, n.Status, n)
		}
		for _, al := range n.Alerts {
			if al.Labels["alertname"] != c || al.Status != "firing" {
				t.Errorf("%s got %s %s", info, al.Labels["alertname"], al.Status)
			}
		}
	}
}

// sum adds up every series of the metric name in reg.
func sum(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var total float64
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			total += m.GetCounter().GetValue() + m.GetGauge().GetValue()
		}
	}
	return total
}
