package runner

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/alertmanager/api/v2/models"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/runner/auditlog"
)

// TestRestartBeforeAScrapeKeepsTheFiringAlert restarts Hermes right after a
// page fired, before Prometheus scraped the series it restores alerts from
// (fakeProm never has any): the new process must not write a second
// "firing" record, and must send the page with its first startsAt and
// active_at, so Alertmanager and the audit log see one alert. It runs the
// live loop in real time (1 s ticks) against an Alertmanager API stub.
func TestRestartBeforeAScrapeKeepsTheFiringAlert(t *testing.T) {
	const page = "HermesRouteFailedOver"
	am, dir, cfgPath, fp := pageOutage(t)
	audit := &testenv.Buffer{}
	run := func() (*Runner, func()) {
		r, _ := newFileRunner(t, fp, dir, Options{ConfigPath: cfgPath, Registerer: prometheus.NewRegistry(), Audit: auditlog.New(audit)})
		return r, start(t, r)
	}
	sent := func(skip int) (*models.PostableAlert, int) { return sentAlert(t, am, page, skip) }
	activeAt := func(r *Runner) time.Time {
		for _, a := range r.View().ActiveAlerts() {
			if a.Rule == page {
				return a.ActiveAt
			}
		}
		return time.Time{}
	}

	r1, stop1 := run()
	first, n := sent(0)
	firstActive := activeAt(r1)
	stop1()

	r2, stop2 := run()
	defer stop2()
	again, _ := sent(n)
	// Two ticks of the new process: time for a second firing record.
	testenv.Eventually(t, 30*time.Second, "two ticks after the restart", func() bool {
		v := r2.View()
		return v.Ticked && v.LastTick.After(time.Time(again.StartsAt).Add(time.Second))
	})
	if !time.Time(again.StartsAt).Equal(time.Time(first.StartsAt)) {
		t.Errorf("startsAt after the restart %s, before %s: Alertmanager sees a new alert", again.StartsAt, first.StartsAt)
	}
	if got := activeAt(r2); firstActive.IsZero() || !got.Equal(firstActive) {
		t.Errorf("active_at after the restart %s, before %s", got, firstActive)
	}
	var firing []string
	for line := range strings.SplitSeq(strings.TrimSpace(audit.String()), "\n") {
		var e evaluator.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		if e.Type == evaluator.EventAlert && e.Name == page && e.State == "firing" {
			firing = append(firing, line)
		}
	}
	if len(firing) != 1 {
		t.Errorf("%d firing records of %s across the restart, want 1:\n%s", len(firing), page, strings.Join(firing, "\n"))
	}
}

// pageOutage is the set-up of the tests that restart Hermes while a page
// fires: the shipped policy at 1 s ticks with a file actuator in dir
// (split.json), sending to an Alertmanager API stub, am, and a hard
// outage of free (fp) that fails it over at the first tick and fires the
// page at once. cfgPath is the configuration.
func pageOutage(t *testing.T) (am *testenv.FakeAlertmanager, dir, cfgPath string, fp *fakeProm) {
	t.Helper()
	am = testenv.NewFakeAlertmanager(t)
	dir = t.TempDir()
	cfg := strings.Replace(string(rules.DefaultYAML), "actuators: []", "actuators:\n  - type: file\n    path: "+filepath.Join(dir, "split.json"), 1)
	cfg = strings.Replace(cfg, "evaluation_interval: 15s", "evaluation_interval: 1s", 1)
	cfg = strings.Replace(cfg, "query_timeout: 10s", "query_timeout: 500ms", 1)
	cfg += "\nalerting:\n  alertmanagers:\n    - url: " + am.URL + "\n"
	cfgPath = filepath.Join(dir, "hermes.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return am, dir, cfgPath, &fakeProm{soft: 0.02, hard: 0.9}
}

// sentAlert waits for the alert name among the alerts am received after
// the first skip ones, and returns the last of them with the count
// received.
func sentAlert(t *testing.T, am *testenv.FakeAlertmanager, name string, skip int) (*models.PostableAlert, int) {
	t.Helper()
	var got *models.PostableAlert
	var n int
	testenv.Eventually(t, 30*time.Second, name+" at the Alertmanager", func() bool {
		all := am.Received()
		n = len(all)
		for _, a := range all[min(skip, n):] {
			if a.Labels["alertname"] == name {
				got = a
			}
		}
		return got != nil
	})
	return got, n
}
