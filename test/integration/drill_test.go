package integration

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// TestDrill runs an error-ratio drill with the real `hermes ctl` against a
// `hermes run` fed by a real Prometheus scraping the test gateway, sending
// to a real Alertmanager: the drill fails route free over on the file
// actuator, the page reaches Alertmanager with drill="true", the recorded
// times are audited in order, the drill ends by itself and `hermes ctl
// drills` reports it from the audit log.
func TestDrill(t *testing.T) {
	am := StartAlertmanager(t)
	e := startEnv(t, testenv.Prometheus, ConfigOptions{AlertmanagerURL: am.URL}, false, func(e *env) { e.hermes.EnableAdminAPI() })
	h := e.hermes
	testenv.EventuallyDetail(t, time.Minute, "free normal with every signal answering", func() (bool, string) {
		r := h.Status(t).Route("free")
		return r.Level == "normal" && r.AllOK() && e.split.Current()["free"] == 100, fmt.Sprintf("%s; split %v", r, e.split.Current())
	})
	ctl := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(testenv.HermesBinary(t), append([]string{"ctl", "--url", h.URL}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("hermes ctl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	ctl("drill", "free", "--set", "soft_fail_ratio=0.5", "--for", "20s", "--reason", "game day", "--by", "integration")

	testenv.EventuallyDetail(t, 30*time.Second, "free failed over by the drill", func() (bool, string) {
		r := h.Status(t).Route("free")
		return r.Level == "failover" && e.split.Current()["free"] == 0, fmt.Sprintf("%s; split %v", r, e.split.Current())
	})
	testenv.EventuallyDetail(t, 30*time.Second, "HermesRouteFailedOver notified with drill=\"true\"", func() (bool, string) {
		got := am.Notified("HermesRouteFailedOver", "free")
		for _, a := range got {
			if a.Status == "firing" && a.Labels["drill"] == "true" {
				return true, ""
			}
		}
		return false, fmt.Sprintf("notified %+v", got)
	})
	testenv.EventuallyDetail(t, 40*time.Second, "the drill's end audited", func() (bool, string) {
		at := auditedDrill(t, h.AuditPath, "free")
		return !at[evaluator.DrillEnded].IsZero(), fmt.Sprintf("phases %v", at)
	})
	at := auditedDrill(t, h.AuditPath, "free")
	testenv.CheckDrillPhases(t, at)
	out := ctl("drills", "--audit.file", h.AuditPath)
	for _, want := range []string{"free   soft_fail_ratio=0.5  " + at[evaluator.DrillStarted].UTC().Format(time.RFC3339),
		at[evaluator.DrillFailedOver].Sub(at[evaluator.DrillStarted]).String(), "integration  expired", "soft_fail_ratio=0.5  1 "} {
		if !strings.Contains(out, want) {
			t.Errorf("ctl drills lacks %q:\n%s", want, out)
		}
	}
}

// auditedDrill reads when each phase of route's drill was audited.
func auditedDrill(t *testing.T, path, route string) map[string]time.Time {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	at := map[string]time.Time{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for sc.Scan() {
		var ev evaluator.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("%s: %v: %s", path, err, sc.Text())
		}
		if ev.Type == evaluator.EventDrill && ev.Route == route {
			at[ev.State] = ev.Time
		}
	}
	return at
}
