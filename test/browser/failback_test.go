package browser_test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/test/integration"
)

// failbackObserve is how long each failback stage is observed in this
// test: long enough for a Chromium on a loaded machine to load the page
// while a stage holds (the integration policy's 3 s is not).
const failbackObserve = "20s"

// TestStatusPageThroughFailoverAndFailback runs a real `hermes run` (1 s
// ticks, the file actuator) fed by a real Prometheus that scrapes a test
// gateway following the split file, as test/integration does. The free
// route's content breaks, it fails over, recovers and fails back through
// the stages 10→30→50→100. At each point — mid-incident, during the
// failback, after — a headless Chromium loads the status page: the split
// chart and every score chart must be drawn from Prometheus with the route
// names, the configured threshold bands, level-change and actuation
// markers, and the failback stage. Last, the file actuator fails, and the
// page marks when, with the error. Screenshots go to a temporary
// directory, or to $HERMES_SCREENSHOT_DIR; the mid-incident one is
// docs/img/status-page.png:
//
//	HERMES_SCREENSHOT_DIR=$PWD/docs/img go test ./test/browser -run TestStatusPageThroughFailoverAndFailback
func TestStatusPageThroughFailoverAndFailback(t *testing.T) {
	chromium := testenv.Binary(t, "chromium")
	testenv.Binary(t, testenv.Prometheus.Binary)
	dir := t.TempDir()
	h := integration.NewHermes(t, dir)
	gw := integration.StartGateway(t, h.SplitPath)
	prom := integration.StartTSDB(t, testenv.Prometheus, map[string]string{"gateway": gw.Target, "hermes": h.Addr})
	cfg := integration.HermesConfig(integration.ConfigOptions{PrometheusURL: prom.URL, SplitPath: h.SplitPath})
	if !strings.Contains(cfg, "observe: 3s") {
		t.Fatal("the integration policy's failback.observe changed; update this test")
	}
	h.WriteConfig(t, strings.Replace(cfg, "observe: 3s", "observe: "+failbackObserve, 1))
	h.Start(t)

	free := func() integration.RouteStatus { return h.Status(t).Route("free") }
	// held waits until Prometheus holds the file actuator's share for free.
	held := func(pct int) {
		t.Helper()
		testenv.EventuallyDetail(t, 60*time.Second, fmt.Sprintf("Prometheus holding the file actuator's %d%% for free", pct), func() (bool, string) {
			v, err := prom.QueryValue(`hermes_actuator_traffic_ratio{job="hermes",actuator="file",service="chat",route="free"}`)
			return err == nil && v == float64(pct)/100, fmt.Sprintf("%v %v; %s", v, err, free())
		})
	}
	testenv.EventuallyDetail(t, time.Minute, "free normal with every signal answering", func() (bool, string) {
		r := free()
		return r.Level == "normal" && r.AllOK(), r.String()
	})
	held(100)

	gw.SetMode("free", integration.Degraded)
	testenv.EventuallyDetail(t, time.Minute, "free failed over", func() (bool, string) {
		r := free()
		return r.Level == "failover" && r.Traffic == 0, r.String()
	})
	held(0)
	dom := statusPage(t, chromium, h.URL)
	checkCharts(t, dom)
	mustContain(t, "mid-incident", dom, `<span class="level level-failover">failover</span>`,
		"applied chat: free 0%, paid-premium 0%, paid-standard 100% (ok)", "shed → failover")
	screenshot(t, chromium, "status-page.png", h.URL+"/", "1200,1500")

	gw.SetMode("free", integration.Recovered)
	testenv.EventuallyDetail(t, 2*time.Minute, "free failing back", func() (bool, string) {
		r := free()
		return r.FailbackStage >= 1, r.String()
	})
	held(10)
	stage := regexp.MustCompile(`<td>stage ([123]) \((10|30|50)%\) since `)
	testenv.EventuallyDetail(t, 2*time.Minute, "a Chromium page showing a failback stage", func() (bool, string) {
		if r := free(); r.FailbackStage == 0 {
			t.Fatalf("the failback completed before Chromium showed a stage of it: %s", r)
		}
		dom = statusPage(t, chromium, h.URL)
		return stage.MatchString(dom), free().String()
	})
	checkCharts(t, dom)
	mustContain(t, "during the failback", dom, "failback stage 1 (10%)", "applied chat: free 10%, paid-premium 0%, paid-standard 90% (ok)")
	screenshot(t, chromium, "status-page-failback.png", h.URL+"/", "1200,1500")

	testenv.EventuallyDetail(t, 3*time.Minute, "free back to normal with all the traffic", func() (bool, string) {
		r := free()
		return r.Level == "normal" && r.Traffic == 100, r.String()
	})
	held(100)
	dom = statusPage(t, chromium, h.URL)
	checkCharts(t, dom)
	mustContain(t, "after the failback", dom, `<span class="level level-normal">normal</span>`,
		"failback stage 1 (10%)", "failback stage 2 (30%)", "failback stage 3 (50%)", "failback stage 4 (100%)",
		"applied chat: free 30%", "applied chat: free 50%", "applied chat: free 100%, paid-premium 0%, paid-standard 0% (ok)")
	screenshot(t, chromium, "status-page-after.png", h.URL+"/", "1200,1500")

	// The split file's path becomes a directory: the file actuator fails
	// from then on, and the page marks when it began, with its error.
	if err := os.Remove(h.SplitPath); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(h.SplitPath, "in-the-way"), 0o755); err != nil {
		t.Fatal(err)
	}
	testenv.EventuallyDetail(t, 60*time.Second, "Prometheus holding the file actuator's failure", func() (bool, string) {
		v, err := prom.QueryValue(`hermes_actuator_failing_since_timestamp_seconds{job="hermes",actuator="file"}`)
		return err == nil && v > 0, fmt.Sprintf("%v %v", v, err)
	})
	dom = statusPage(t, chromium, h.URL)
	failed := regexp.MustCompile(`<g class="marker marker-actuation" data-label="actuator file failed on chat: [^"]+ \(error\)">.*?✕</text></g>`)
	if !failed.MatchString(svgOf(t, dom, "service chat: traffic split")) || !failed.MatchString(svgOf(t, dom, "route free: score")) {
		t.Error("no ✕ marker with the file actuator's error on the split chart and free's score chart")
	}
	if t.Failed() {
		t.Logf("DOM:\n%s", dom)
	}
}

// statusPage is the status page at base as a headless Chromium rendered
// it; its history must come from Prometheus.
func statusPage(t *testing.T, chromium, base string) string {
	t.Helper()
	dom := browse(t, chromium, "--dump-dom", base+"/")
	mustContain(t, "the status page", dom, "from Prometheus", "actuations from Prometheus")
	return dom
}

// checkCharts asserts that the split chart and every route's score chart
// are drawn: a non-empty area or line per route, the configured
// threshold bands, and the markers of level changes and actuations.
func checkCharts(t *testing.T, dom string) {
	t.Helper()
	routes := integration.Routes
	split := svgOf(t, dom, "service chat: traffic split")
	for _, r := range routes {
		if !regexp.MustCompile(`<polygon class="series" data-name="` + r + `" points="[0-9., ]{40,}"`).MatchString(split) {
			t.Errorf("split chart: no area drawn for %s", r)
		}
	}
	if !strings.Contains(split, `class="marker marker-actuation"`) {
		t.Error("split chart: no actuation marker")
	}
	for _, r := range routes {
		score := svgOf(t, dom, "route "+r+": score")
		if !regexp.MustCompile(`<path class="series" data-name="` + r + `" d="M[0-9., L]{20,}"`).MatchString(score) {
			t.Errorf("score chart of %s: no line drawn", r)
		}
		// The integration policy's thresholds: warm 85, shed 75, failover 60.
		for _, band := range []string{"normal ≥ 85", "warm ≥ 75", "shed ≥ 60", "failover ≥ 0"} {
			if !strings.Contains(score, `class="band" data-label="`+band+`"`) {
				t.Errorf("score chart of %s: no band %q", r, band)
			}
		}
		if !strings.Contains(score, `class="marker marker-actuation"`) {
			t.Errorf("score chart of %s: no actuation marker", r)
		}
	}
	if !strings.Contains(svgOf(t, dom, "route free: score"), `class="marker marker-level" data-label="normal → warm"`) {
		t.Error("score chart of free: no level-change marker")
	}
}

// svgOf is the <svg> element whose aria-label is label.
func svgOf(t *testing.T, dom, label string) string {
	t.Helper()
	i := strings.Index(dom, `aria-label="`+label+`"`)
	if i < 0 {
		t.Fatalf("no chart %q on the page", label)
	}
	i = strings.LastIndex(dom[:i], "<svg")
	j := strings.Index(dom[i:], "</svg>")
	return dom[i : i+j+len("</svg>")]
}

func mustContain(t *testing.T, what, dom string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(dom, w) {
			t.Errorf("%s lacks %q", what, w)
		}
	}
}
