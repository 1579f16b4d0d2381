package browser_test

import (
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestBacktestReportInChromium runs `hermes backtest --report` on the
// content-failure scenario, as a user would, then opens the file in a real
// headless Chromium: the charts must be drawn (non-empty areas and lines
// with the route names, the configured threshold bands, level markers) and
// the summary filled. It saves a screenshot (in $HERMES_SCREENSHOT_DIR when
// set).
func TestBacktestReportInChromium(t *testing.T) {
	chromium := testenv.Binary(t, "chromium")
	hermes := testenv.HermesBinary(t)
	dir := t.TempDir()
	report := filepath.Join(dir, "report.html")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, hermes, "backtest", "--series", "../../testdata/scenarios/content_failure.yaml", "--report", report).CombinedOutput()
	if err != nil {
		t.Fatalf("hermes backtest --report: %v\n%s", err, out)
	}

	dom := browse(t, chromium, "--dump-dom", "file://"+report)
	for _, want := range []string{
		`<td id="detected">1</td>`, `<td id="failed-over">1</td>`,
		`aria-label="service chat: traffic split"`, `aria-label="route free: score"`, `aria-label="route paid-standard: score"`,
		`data-label="normal ≥ 85"`, `data-label="warm ≥ 75"`, `data-label="shed ≥ 60"`, `data-label="failover ≥ 0"`,
		"normal → warm", "warm → shed", "shed → failover",
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the report Chromium rendered lacks %q", want)
		}
	}
	// Every route has a drawn area and a drawn line.
	for _, route := range []string{"free", "paid-standard", "paid-premium"} {
		area := regexp.MustCompile(`<polygon class="series" data-name="` + route + `" points="[0-9., ]{40,}"`)
		line := regexp.MustCompile(`<path class="series" data-name="` + route + `" d="M[0-9., L]{40,}"`)
		if !area.MatchString(dom) || !line.MatchString(dom) {
			t.Errorf("route %s: area drawn %v, line drawn %v", route, area.MatchString(dom), line.MatchString(dom))
		}
	}
	if t.Failed() {
		t.Logf("DOM:\n%s", dom)
	}

	screenshot(t, chromium, "backtest-report.png", "file://"+report, "1000,1400")
}
