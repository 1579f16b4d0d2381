package lab_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/internal/testenv"
)

// note is one alert of one notification the lab's pager got.
type note struct {
	Status   string            `json:"status"`
	Labels   map[string]string `json:"labels"`
	StartsAt time.Time         `json:"startsAt"`
}

// TestLabTour runs docs/lab.md's tour on `hermes lab --fast` (the shipped
// policy with its level and failback timers divided by 30 and a 3 s tick;
// the signals, windows, thresholds and confidence are the shipped ones):
// with 12 req/s through nginx, 30 % of free's replies become an error
// template inside HTTP 200. free must fail over (nginx sends its calls
// elsewhere), the status API and the page must name error_body_ratio,
// Alertmanager must hold HermesRouteFailedOver for free and the pager get
// it. Once healed, free must fail back through its stages to all the
// traffic, and the pager's story end: Alertmanager no longer holds the
// alert and the pager got it resolved. Without the fault nothing fails
// over, and the test fails at its first deadline.
func TestLabTour(t *testing.T) {
	l := startLab(t, "--fast")
	status, calls, get, labCmd := l.status, l.calls, l.get, l.labCmd
	failedOver := func() []testenv.AMAlert {
		var out []testenv.AMAlert
		for _, a := range l.am.Alerts(t, "HermesRouteFailedOver") {
			if a.Labels["route"] == "free" && a.Status.State == "active" {
				out = append(out, a)
			}
		}
		return out
	}
	paged := func() []string {
		var notes []note
		if err := json.Unmarshal(get(l.u.Pager), &notes); err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, n := range notes {
			if n.Labels["alertname"] == "HermesRouteFailedOver" && n.Labels["route"] == "free" {
				out = append(out, n.Status)
			}
		}
		return out
	}

	testenv.EventuallyDetail(t, 2*time.Minute, "free normal with all of chat's calls", func() (bool, string) {
		r := status("free")
		v, detail := calls("free")
		return r.Level == "normal" && r.Traffic == 100 && v > 5, detail
	})
	// The lab's load mixes in titles and summaries held to a few tokens
	// by the caller's own max_tokens, which end with finish_reason
	// length: a healthy lab records no failure of any kind.
	testenv.EventuallyDetail(t, time.Minute, "hermes proxy's healthy calls scraped", func() (bool, string) {
		v, err := l.prom.QueryValue(`sum(llm_gateway_requests_total{route="free",verdict="ok"}) or vector(0)`)
		return v >= 60, fmt.Sprintf("%v ok calls (%v)", v, err)
	})
	if bad, err := l.prom.Query(`llm_gateway_requests_total{verdict!="ok"} > 0`); err != nil || len(bad) > 0 {
		t.Fatalf("the healthy lab recorded failures: %v %v", bad, err)
	}

	labCmd("fault", "free", "30%", "error_body")
	testenv.EventuallyDetail(t, 3*time.Minute, "free failed over", func() (bool, string) {
		r := status("free")
		return r.Level == "failover" && r.Traffic == 0, r.String()
	})
	testenv.EventuallyDetail(t, time.Minute, "nginx sending free no calls and paid-standard all", func() (bool, string) {
		free, d1 := calls("free")
		paid, d2 := calls("paid-standard")
		return free == 0 && paid > 5, d1 + "; " + d2
	})
	if r := status("free"); !strings.Contains(strings.Join(append(r.State, r.Reasons...), " "), "error_body_ratio") {
		t.Errorf("the status API does not name the cause, error_body_ratio: %s", r)
	}
	if page := string(get(l.u.Hermes + "/")); !strings.Contains(page, "error_body_ratio") {
		t.Errorf("the status page does not name the cause, error_body_ratio")
	}
	testenv.EventuallyDetail(t, time.Minute, "Alertmanager holding HermesRouteFailedOver for free, and the pager paged", func() (bool, string) {
		active, notes := failedOver(), paged()
		return len(active) == 1 && slices.Contains(notes, "firing"), fmt.Sprintf("active %v, pager %v", active, notes)
	})

	labCmd("heal", "free")
	testenv.EventuallyDetail(t, 6*time.Minute, "free failing back", func() (bool, string) {
		r := status("free")
		return r.FailbackStage >= 1 && r.Traffic > 0, r.String()
	})
	// --fast divides the policy's timers, not PromQL's windows: the
	// failures before the failover stay in the 15m evidence windows. The
	// stages are judged on the calls since free stopped serving users
	// (evaluator/quiet.go), so they no longer abort on those (seen in CI
	// on 4c724ce), and the failback completes within minutes.
	testenv.EventuallyDetail(t, 8*time.Minute, "free's failback completed: normal with all the traffic", func() (bool, string) {
		r := status("free")
		return r.Level == "normal" && r.FailbackStage == 0 && r.Traffic == 100, r.String()
	})
	testenv.EventuallyDetail(t, time.Minute, "nginx sending free all of chat's calls again", func() (bool, string) {
		free, d1 := calls("free")
		paid, d2 := calls("paid-standard")
		return free > 5 && paid == 0, d1 + "; " + d2
	})
	testenv.EventuallyDetail(t, time.Minute, "the pager's story: HermesRouteFailedOver fired, then resolved", func() (bool, string) {
		active, notes := failedOver(), paged()
		fired := slices.Index(notes, "firing")
		return len(active) == 0 && fired >= 0 && slices.Contains(notes[fired:], "resolved"), fmt.Sprintf("active %v, pager %v", active, notes)
	})

	// Ctrl-C stops every server the lab started, by its PID.
	pids := regexp.MustCompile(`msg=started server=("[^"]+"|\S+) pid=(\d+)`).FindAllStringSubmatch(testenv.Tail(l.proc.LogPath, 1000), -1)
	if len(pids) != 6 {
		t.Fatalf("the lab's log names %d started servers, want 6:\n%s", len(pids), l.proc.LogTail(40))
	}
	if err := l.proc.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := l.proc.Err(); err != nil {
		t.Errorf("hermes lab ended with %v on Ctrl-C, want exit 0", err)
	}
	for _, m := range pids {
		pid, _ := strconv.Atoi(m[2])
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("%s (pid %d) still runs after the lab stopped (%v)", m[1], pid, err)
		}
	}
}
