package runner

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/alertmanager/api/v2/models"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/runner/persist"
)

// TestRestartKeepsTheIncidentStartsAt: a page that fired again in the same
// incident (a failback stage stepped back) and is then restored by a
// restart is sent with the startsAt of the first page, the one the
// on-call person got, not the time it fired again. The first process runs
// the live loop (1 s ticks) until the page fired and the state file holds
// its incident startsAt; the page's second firing is then written into the
// saved alert, as the process would have saved it after an aborted
// failback (a real failback takes 10 min of observation). Before the
// startsAt was saved, the second process sent the saved FiredAt.
func TestRestartKeepsTheIncidentStartsAt(t *testing.T) {
	const page = "HermesRouteFailedOver"
	am, dir, cfgPath, fp := pageOutage(t)
	statePath := filepath.Join(dir, persist.LocalFileName)
	run := func() func() {
		r, _ := newFileRunner(t, fp, dir, Options{ConfigPath: cfgPath, Registerer: prometheus.NewRegistry()})
		return start(t, r)
	}
	sent := func(skip int) (*models.PostableAlert, int) { return sentAlert(t, am, page, skip) }

	stop1 := run()
	first, _ := sent(0)
	firstStart := time.Time(first.StartsAt)
	testenv.Eventually(t, 30*time.Second, "the page's incident startsAt in the state file, a tick after it", func() bool {
		l, err := persist.ReadLocal(statePath)
		if err != nil || len(l.IncidentStarts) == 0 {
			return false
		}
		return l.Alerts.Tick.After(firstStart)
	})
	stop1()
	n := len(am.Received()) // process 1 resent the page every tick

	// The page fired again at the last saved tick, after an aborted
	// failback, in the same incident.
	local, err := persist.ReadLocal(statePath)
	if err != nil {
		t.Fatal(err)
	}
	again := local.Alerts.Tick
	refired := false
	for i, a := range local.Alerts.Alerts {
		if a.Labels["alertname"] == page {
			local.Alerts.Alerts[i].ActiveAt, local.Alerts.Alerts[i].FiredAt = again, again
			refired = true
		}
	}
	if !refired {
		t.Fatalf("the state file holds no %s: %+v", page, local.Alerts)
	}
	if got := local.IncidentStarts[0]; !got.StartsAt.Equal(firstStart) || got.Route != "free" {
		t.Fatalf("saved incident start %+v, want free's page at %s", got, firstStart)
	}
	if err := persist.SaveLocal(statePath, local); err != nil {
		t.Fatal(err)
	}

	stop2 := run()
	defer stop2()
	second, _ := sent(n)
	if got := time.Time(second.StartsAt); !got.Equal(firstStart) {
		t.Errorf("after the restart the page starts %s, want the first page's %s (it fired again at %s)", got, firstStart, again)
	}
}
