package alertmanager

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/runner/alerting"
)

// storyYAML is the scenario's policy with a failback of two stages and
// the shipped policy's failover page and abort alert.
const storyYAML = `
global: {evaluation_interval: 1s, query_timeout: 500ms}` + testenv.HardFailScoring + `
levels:
  - {name: warm, below: 85, recover_above: 90, primary_percent: 95, retries: true}
  - {name: shed, below: 75, recover_above: 82, primary_percent: 50, retries: true}
  - {name: failover, below: 60, recover_above: 80, recover_for: 2s, primary_percent: 0}
failback: {stages: [50, 100], observe: 2s, min_score: 80, max_completed: 5, window: 1h, manual_after: 1h}
services:
  - name: chat
    routes: [free, paid]
alerts:
  - name: HermesRouteFailedOver
    tier: A
    expr: level == "failover" && stage == 0
    summary: 'Traffic of {{ .Service }} was failed over away from route {{ .Route }}.'
    description: '{{ if .MovedBy }}Moved by {{ join .MovedBy "; " }} ({{ .MovedTo }} at {{ .MovedAt }}).{{ end }}{{ if .Aborted }} Failback aborted: {{ .Aborted }}.{{ end }}'
  - name: HermesFailbackAborted
    tier: A
    expr: level == "failover" && stage == 0 && aborted != ""
    summary: 'Failback of route {{ .Route }} of {{ .Service }} aborted: {{ .Aborted }}.'
`

// TestAbortedFailbackIsOneStory: a failback that steps back to no traffic
// before Alertmanager flushed the failover page's resolve reaches the pager
// as one story. The page fires again with the startsAt the on-call person
// saw (not a new one), the abort alert makes the route's group notify
// again (the same page alone would be deduplicated: its firing set did not
// change), and the final resolve carries the first startsAt. Before, the
// page came back with a new startsAt and no notification.
func TestAbortedFailbackIsOneStory(t *testing.T) {
	hooks := testenv.NewWebhook(t)
	// A group interval longer than the failback: the resolve at its start
	// is not flushed before the abort.
	am := testenv.StartAlertmanager(t, testConfig(t, hooks.URL, timings{groupWait: "1s", groupInterval: "15s", repeatInterval: "1h"}))
	logger := slog.New(slog.NewTextHandler(t.Output(), &slog.HandlerOptions{Level: slog.LevelInfo}))
	sender, err := alerting.New(config.AlertingConfig{
		Alertmanagers: []config.AlertmanagerConfig{{URL: am.URL, Timeout: 2 * time.Second}},
	}, time.Second, prometheus.NewRegistry(), logger)
	if err != nil {
		t.Fatal(err)
	}
	d := &driver{p: testenv.Policy(t, storyYAML), sender: sender, log: logger}
	testenv.Go(t, sender.Run)
	testenv.Go(t, func(ctx context.Context) { d.run(ctx, time.Second) })

	const pager, page, aborted = "hermes-pager", "HermesRouteFailedOver", "HermesFailbackAborted"
	d.set(failing)
	testenv.Eventually(t, 30*time.Second, "the failover page", func() bool { _, ok := first(hooks, pager, page, "", "firing"); return ok })
	n, _ := first(hooks, pager, page, "", "firing")
	var startsAt time.Time
	for _, al := range n.Alerts {
		if al.Labels["alertname"] == page {
			startsAt = al.StartsAt
			if d := al.Annotations["description"]; !strings.HasPrefix(d, "Moved by hard_fail_ratio 0.5 (-50.0)") {
				t.Errorf("the page's description is %q, want the signal that moved the route", d)
			}
		}
	}

	t.Log("recovered: the failback starts (the page resolves), then steps back at its first stage")
	d.set(healthy)
	testenv.Eventually(t, 30*time.Second, "a failback stage", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		rs := d.st.Routes["free"]
		return rs != nil && rs.Stage > 0
	})
	d.set(failing)
	testenv.Eventually(t, 60*time.Second, "the abort at "+pager, func() bool { _, ok := first(hooks, pager, aborted, "", "firing"); return ok })
	n, _ = first(hooks, pager, aborted, "", "firing")
	t.Logf("abort notification: %s", n)
	var sawPage bool
	for _, al := range n.Alerts {
		switch al.Labels["alertname"] {
		case aborted:
			if s := al.Annotations["summary"]; !strings.Contains(s, "aborted: stage 1 (50 %)") {
				t.Errorf("the abort's summary is %q", s)
			}
		case page:
			sawPage = true
			if al.Status != "firing" || !al.StartsAt.Equal(startsAt) {
				t.Errorf("the page in the abort's notification: %s from %s, want firing from %s (the page the on-call got)", al.Status, al.StartsAt, startsAt)
			}
			if d := al.Annotations["description"]; !strings.Contains(d, "Moved by hard_fail_ratio 0.5") || !strings.Contains(d, "Failback aborted: stage 1") {
				t.Errorf("the page's description after the abort is %q", d)
			}
		}
	}
	if !sawPage {
		t.Errorf("the abort's notification does not carry the failover page: %s", n)
	}

	t.Log("healed: the failback completes; the page's resolve carries the first startsAt")
	d.set(healthy)
	testenv.Eventually(t, 60*time.Second, "the route back at normal", func() bool {
		d.mu.Lock()
		defer d.mu.Unlock()
		rs := d.st.Routes["free"]
		return rs != nil && rs.Move == nil && rs.Stage == 0 && rs.Level.String() == "normal"
	})
	testenv.Eventually(t, 60*time.Second, "the page resolved in Alertmanager", func() bool { return len(am.Alerts(t, page)) == 0 })
	for _, al := range hooks.Alerts(pager, func(a testenv.NotifiedAlert) bool { return a.Labels["alertname"] == page }) {
		if !al.StartsAt.Equal(startsAt) {
			t.Errorf("%s notified %s from %s, want from %s: one incident", pager, al.Status, al.StartsAt, startsAt)
		}
	}
}
