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

// TestCompareReportInChromium runs `hermes backtest --compare` on the
// content-failure scenario with a candidate that moves sooner, as an
// operator reviewing a threshold change would, and opens the report in a
// real headless Chromium: both summaries side by side with the differing
// rows marked, each service's split under both policies on one chart
// (solid current, dashed candidate), both scores per route, and the
// decisions that differ.
func TestCompareReportInChromium(t *testing.T) {
	chromium := testenv.Binary(t, "chromium")
	hermes := testenv.HermesBinary(t)
	report := filepath.Join(t.TempDir(), "compare.html")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cand := testenv.CandidateFile(t)
	out, err := exec.CommandContext(ctx, hermes, "backtest", "--series", "../../testdata/scenarios/content_failure.yaml",
		"--config", "../../rules/hermes.yaml", "--compare", cand, "--report", report).CombinedOutput()
	if err != nil {
		t.Fatalf("hermes backtest --compare --report: %v\n%s", err, out)
	}

	dom := browse(t, chromium, "--dump-dom", "file://"+report)
	for _, want := range []string{
		"content_failure.yaml: ../../rules/hermes.yaml vs " + cand, `<th>../../rules/hermes.yaml</th><th>` + cand + `</th>`,
		`<tr class="differs"><th>minutes on a degraded route</th>`,
		`aria-label="service chat: split, current vs candidate"`, `aria-label="route free: score, current vs candidate"`,
		`class="dashed-note">dashed: candidate</text>`,
		cand + "  1970-01-01 01:04:45  level chat/free warm → shed",
		"../../rules/hermes.yaml  1970-01-01 01:06:00  level chat/free warm → shed",
		"candidate: normal → warm",
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the compare report Chromium rendered lacks %q", want)
		}
	}
	// Both policies' shares of every route are drawn on the split chart:
	// the current one solid, the candidate's dashed.
	split := dom[strings.Index(dom, `aria-label="service chat: split`):]
	split = split[:strings.Index(split, "</svg>")]
	for _, route := range []string{"free", "paid-standard", "paid-premium"} {
		solid := regexp.MustCompile(`<path class="series" data-name="` + route + `" d="M[0-9., L]{40,}" fill="none" stroke="#[0-9a-f]+" stroke-width="2"></path>`)
		dashed := regexp.MustCompile(`<path class="series" data-name="` + regexp.QuoteMeta(route+" (candidate)") + `" d="M[0-9., L]{40,}" fill="none" stroke="#[0-9a-f]+" stroke-width="2" stroke-dasharray="6,4"></path>`)
		if !solid.MatchString(split) || !dashed.MatchString(split) {
			t.Errorf("route %s: current drawn %v, candidate drawn dashed %v", route, solid.MatchString(split), dashed.MatchString(split))
		}
	}
	if t.Failed() {
		t.Logf("DOM:\n%s", dom)
	}
	screenshot(t, chromium, "backtest-compare.png", "file://"+report, "1000,1600")
}
