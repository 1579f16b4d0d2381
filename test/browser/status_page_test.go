// Package browser_test opens Hermes's status page in a real headless
// Chromium, as an operator would, while a live runner fails a route over.
package browser_test

import (
	"context"
	"fmt"
	"image/color"
	"log/slog"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/promapi"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/runner"
	"github.com/hermes-failover/hermes/web"
)

func TestStatusPageInChromium(t *testing.T) {
	chromium := testenv.Binary(t, "chromium")
	dir := t.TempDir()
	r, reg := startRunner(t, dir)
	srv := httptest.NewServer(web.Handler(web.Options{Loop: web.Live(r), Gatherer: reg}))
	defer srv.Close()

	weights := func() map[string]int { return web.StatusOf(r.View()).Services[0].Weights }
	testenv.EventuallyDetail(t, 20*time.Second, "free failed over", func() (bool, string) {
		return len(weights()) > 0 && weights()["free"] == 0, fmt.Sprintf("%+v", web.StatusOf(r.View()).Services[0])
	})
	if _, err := r.Submit(context.Background(), evaluator.Command{Kind: evaluator.CommandPin, Service: "chat", Route: "paid-premium", Reason: "launch <day>", By: "alice"}); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 20*time.Second, "a tick applying the pin", func() bool { return weights()["paid-premium"] == 100 })

	dom := browse(t, chromium, "--dump-dom", srv.URL+"/")
	for _, want := range []string{
		`id="route-free"`, `level-failover`, `id="route-paid-premium"`,
		"Override <b>pin</b> → paid-premium: launch &lt;day&gt; (by alice)",
		"paid-premium 100%", "HermesRouteFailedOver", "hard_fail_ratio", "1080 of 1200 calls in 1m",
		// History charts from the live runner, thresholds from the config.
		`aria-label="service chat: traffic split"`, `aria-label="route free: score"`,
		`data-label="warm ≥ 75"`, `data-label="failover ≥ 0"`, `class="marker marker-level"`,
		"level chat/free normal → failover", `<code class="next">hermes ctl clear chat --reason`,
		// The failed-over route says what its failback waits for.
		`<li class="state">failed over since `,
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("the page Chromium rendered lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("DOM:\n%s", dom)
	}

	for _, route := range []string{"free", "paid-standard", "paid-premium"} {
		if !regexp.MustCompile(`<path class="series" data-name="` + route + `" d="M[0-9., L]{20,}"`).MatchString(dom) {
			t.Errorf("route %s: no score line drawn", route)
		}
	}
	// An operator's pin mid-incident (the README's screenshot is
	// TestStatusPageThroughFailoverAndFailback's).
	shot := screenshot(t, chromium, "status-page-pin.png", srv.URL+"/", "1200,1400")
	// The healthy routes' scores are judged: drawn in the good colour
	// (TestStatusPageSaysPrometheusUnreachable counts on this).
	if n := pixels(t, shot, color.RGBA{0x1a, 0x7f, 0x37, 0xff}); n == 0 {
		t.Error("no pixel in the colour of a good score, with two healthy routes")
	}
}

// query answers every signal with healthy values, except a hard outage on
// the free route (fault injection in place of Prometheus: the browser is
// what this test is about).
var query = promapi.ByPart(answer)

// answer is query's answer to one signal or evidence query.
func answer(_ context.Context, q string, t time.Time) (model.Vector, error) {
	if strings.Contains(q, "hermes_") {
		return model.Vector{}, nil
	}
	var v model.Vector
	for _, r := range []string{"free", "paid-standard", "paid-premium"} {
		val := 0.0
		switch {
		case strings.Contains(q, "increase("):
			val = 1200 // the calls or samples behind a ratio: 20 req/s
		case strings.Contains(q, `verdict="hard_fail"}`) && r == "free":
			val = 0.9
		case strings.Contains(q, "llm_probe_results_total"), strings.Contains(q, "quality"):
			val = 1
		case strings.Contains(q, "histogram_quantile"):
			val = 1
		case strings.Contains(q, "quota"):
			val = 0.9
		}
		v = append(v, &model.Sample{Metric: model.Metric{"route": model.LabelValue(r)}, Value: model.SampleValue(val), Timestamp: model.TimeFromUnixNano(t.UnixNano())})
	}
	return v, nil
}

// startRunner runs a live runner on the shipped policy with 1 s ticks,
// its files in dir, fed by query; it stops at the end of the test.
func startRunner(t *testing.T, dir string) (*runner.Runner, *prometheus.Registry) {
	t.Helper()
	return startRunnerQuery(t, dir, query)
}

// startRunnerQuery is startRunner fed by q.
func startRunnerQuery(t *testing.T, dir string, q promapi.QueryFunc) (*runner.Runner, *prometheus.Registry) {
	t.Helper()
	cfg := strings.Replace(string(rules.DefaultYAML), "evaluation_interval: 15s", "evaluation_interval: 1s", 1)
	cfg = strings.Replace(cfg, "query_timeout: 10s", "query_timeout: 500ms", 1)
	cfgPath := filepath.Join(dir, "hermes.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	r, err := runner.New(runner.Options{ConfigPath: cfgPath, Registerer: reg,
		NewQuery: func(*config.Config, *slog.Logger) (promapi.QueryFunc, error) { return q, nil }})
	if err != nil {
		t.Fatal(err)
	}
	testenv.Go(t, func(ctx context.Context) { _ = r.Run(ctx) })
	return r, reg
}
