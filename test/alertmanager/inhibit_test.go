package alertmanager

import (
	"strings"
	"testing"
	"time"

	"github.com/go-openapi/strfmt"
	"github.com/prometheus/alertmanager/api/v2/models"

	"github.com/hermes-failover/hermes/internal/testenv"
)

// TestInhibitionNeedsLabels loads the shipped configuration into a real
// Alertmanager and checks which alerts its inhibit rules mute: only alerts
// of the same service and route, never because both lack those labels,
// a drill's only its own, and one page per actuator outage.
func TestInhibitionNeedsLabels(t *testing.T) {
	hooks := testenv.NewWebhook(t)
	am := testenv.StartAlertmanager(t, testConfig(t, hooks.URL, timings{groupWait: "1s", groupInterval: "2s", repeatInterval: "1m"}))

	alert := func(labels string) *models.PostableAlert {
		ls := models.LabelSet{}
		for _, kv := range strings.Fields(labels) {
			k, v, _ := strings.Cut(kv, "=")
			ls[k] = v
		}
		return &models.PostableAlert{
			Alert:    models.Alert{Labels: ls},
			StartsAt: strfmt.DateTime(time.Now().Add(-time.Minute)),
			EndsAt:   strfmt.DateTime(time.Now().Add(time.Hour)),
		}
	}
	// Sources and targets, each with the state Alertmanager must give it.
	cases := []struct {
		labels, want string
	}{
		// Watchdogs carry neither service nor route: they mute nothing.
		{"alertname=HermesDown severity=critical tier=A cause=scrape_failed", "active"},
		{"alertname=HermesQueryErrors severity=warning tier=B signal=p99_ratio reason=timeout", "active"},
		{"alertname=HermesTicksSkipped severity=warning tier=B", "active"},
		// A route's A mutes that route's B and C, not another route's.
		{"alertname=HermesRouteFailedOver severity=critical tier=A service=chat route=free", "active"},
		{"alertname=HermesRouteScoreDegraded severity=warning tier=B service=chat route=free", "suppressed"},
		{"alertname=HermesWarmStageInUse severity=info tier=C service=chat route=free", "suppressed"},
		{"alertname=HermesRouteScoreDegraded severity=warning tier=B service=chat route=paid-standard", "active"},
		// A route's B mutes its C.
		{"alertname=HermesWarmStageInUse severity=info tier=C service=chat route=paid-standard", "suppressed"},
		// A service's A mutes the service's own B, not its routes'.
		{"alertname=HermesAllRoutesBad severity=critical tier=A service=embed", "active"},
		{"alertname=HermesServiceDegraded severity=warning tier=B service=embed", "suppressed"},
		{"alertname=HermesRouteScoreDegraded severity=warning tier=B service=embed route=e1", "active"},
		// A drill's A mutes the drill's B and C, not a real B of the
		// drilled route.
		{"alertname=HermesRouteFailedOver severity=critical tier=A service=chat route=drilled drill=true", "active"},
		{"alertname=HermesRouteScoreDegraded severity=warning tier=B service=chat route=drilled drill=true", "suppressed"},
		{"alertname=HermesLatencyP95High severity=warning tier=B service=chat route=drilled", "active"},
		// One page per actuator outage.
		{"alertname=HermesActuatorFailing severity=critical tier=A actuator=split", "active"},
		{"alertname=HermesActuationFailing severity=critical tier=A actuator=split", "suppressed"},
		{"alertname=HermesActuationFailing severity=critical tier=A actuator=nginx", "active"},
	}
	state := func(labels string) string {
		want := alert(labels).Labels
		for _, a := range am.Alerts(t, want["alertname"]) {
			same := len(a.Labels) == len(want)
			for k, v := range want {
				same = same && a.Labels[k] == v
			}
			if same {
				return a.Status.State
			}
		}
		return "absent"
	}
	// Alertmanager mutes a target only once its inhibitor has seen the
	// source, and it notifies at once for a group whose alert started longer
	// than group_wait ago: sources and targets posted together race (a
	// target was paged on a loaded machine). Post the alerts that stay
	// active first, as a source firing before its targets would, and the
	// targets once Alertmanager holds the sources.
	post := func(active bool) {
		var alerts models.PostableAlerts
		for _, c := range cases {
			if (c.want == "active") == active {
				alerts = append(alerts, alert(c.labels))
			}
		}
		am.PostAlerts(t, alerts)
	}
	post(true)
	testenv.Eventually(t, 30*time.Second, "the sources processed", func() bool {
		for _, c := range cases {
			if s := state(c.labels); c.want == "active" && s != "active" {
				return false
			}
		}
		return true
	})
	post(false)
	// Inhibitions are computed as alerts arrive; wait until every alert
	// has been processed, then compare.
	testenv.Eventually(t, 30*time.Second, "every alert processed", func() bool {
		for _, c := range cases {
			if s := state(c.labels); s == "absent" || s == "unprocessed" {
				return false
			}
		}
		return true
	})
	for _, c := range cases {
		if got := state(c.labels); got != c.want {
			t.Errorf("%s: %s, want %s", c.labels, got, c.want)
		}
	}
	// Only one page names actuator split.
	testenv.Eventually(t, 30*time.Second, "the actuator page", func() bool {
		_, ok := first(hooks, "hermes-pager", "HermesActuatorFailing", "", "firing")
		return ok
	})
	if n, ok := first(hooks, "hermes-pager", "HermesActuationFailing", "", "firing"); ok {
		for _, a := range n.Alerts {
			if a.Labels["alertname"] == "HermesActuationFailing" && a.Labels["actuator"] == "split" {
				t.Errorf("actuator split paged twice: %s", n)
			}
		}
	}
}
