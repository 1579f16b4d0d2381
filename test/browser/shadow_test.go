package browser_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/test/integration"
	"github.com/hermes-failover/hermes/web/api"
)

// TestShadowPolicyLive runs a real `hermes run --candidate.file` fed by a
// real Prometheus that scrapes the test gateway. The candidate penalises
// soft failures from 3 % (live from 5 %); the free route's soft failures
// rise to 4.5 %. Live keeps free normal and all its traffic; the
// candidate moves it down, and says so in the API, on the page (headless
// Chromium), in `hermes explain` and in its own series, which Prometheus
// keeps beside live's.
func TestShadowPolicyLive(t *testing.T) {
	chromium := testenv.Binary(t, "chromium")
	testenv.Binary(t, testenv.Prometheus.Binary)
	dir := t.TempDir()
	h := integration.NewHermes(t, dir)
	gw := integration.StartGateway(t, h.SplitPath)
	prom := integration.StartTSDB(t, testenv.Prometheus, map[string]string{"gateway": gw.Target, "hermes": h.Addr})
	cfg := integration.HermesConfig(integration.ConfigOptions{PrometheusURL: prom.URL, SplitPath: h.SplitPath})
	const livePenalty = "{signal: soft_fail_ratio, above: 0.05, points_per_unit: 300, max: 100}"
	if !strings.Contains(cfg, livePenalty) {
		t.Fatal("the integration policy's soft_fail_ratio penalty changed; update this test")
	}
	h.WriteConfig(t, cfg)
	candPath := filepath.Join(dir, "candidate.yaml")
	cand := strings.Replace(cfg, livePenalty, "{signal: soft_fail_ratio, above: 0.03, points_per_unit: 2000, max: 100}", 1)
	if err := os.WriteFile(candPath, []byte(cand), 0o644); err != nil {
		t.Fatal(err)
	}
	h.SetCandidate(candPath)
	h.Start(t)

	status := func() api.Status {
		t.Helper()
		resp, err := http.Get(h.URL + "/api/v1/status")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var st api.Status
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			t.Fatal(err)
		}
		return st
	}
	free := func() integration.RouteStatus { return h.Status(t).Route("free") }
	testenv.EventuallyDetail(t, time.Minute, "free normal under both policies with every signal answering", func() (bool, string) {
		r, st := free(), status()
		return r.Level == "normal" && r.AllOK() && st.Candidate != nil && !st.Candidate.LastTick.IsZero() && len(st.Candidate.Routes) == 0,
			fmt.Sprintf("%s; candidate %+v", r, st.Candidate)
	})

	gw.SetMode("free", integration.Mode{Name: "mild", SoftFail: 0.045, HardFail: 0.002, Probe: 1, Latency: 0.4})
	var diff api.CandidateDifference
	testenv.EventuallyDetail(t, time.Minute, "the candidate moving free where live stays normal", func() (bool, string) {
		st := status()
		for _, d := range st.Candidate.Differences {
			if d.By == "candidate" && d.Event.Route == "free" && d.Event.Type == "level" {
				diff = d
				return true, ""
			}
		}
		return false, fmt.Sprintf("%s; candidate %+v", free(), st.Candidate)
	})
	if !strings.HasPrefix(diff.Text, "candidate: chat/free warm at ") || !strings.Contains(diff.Text, "(live stayed normal): score ") || strings.Count(diff.Text, "score ") != 1 || diff.Instead != "stayed normal" {
		t.Errorf("the difference reads %q", diff.Text)
	}
	if r := free(); r.Level != "normal" || r.Traffic != 100 {
		t.Fatalf("live moved free: %s", r)
	}
	testenv.EventuallyDetail(t, time.Minute, "Prometheus holding both policies' levels of free", func() (bool, string) {
		c, err1 := prom.QueryValue(`hermes_candidate_route_level{job="hermes",route="free"}`)
		l, err2 := prom.QueryValue(`hermes_route_level{job="hermes",route="free"}`)
		return err1 == nil && err2 == nil && c >= 1 && l == 0, fmt.Sprintf("candidate %v (%v), live %v (%v)", c, err1, l, err2)
	})

	explain, err := exec.Command(testenv.HermesBinary(t), "explain", "--route", "free", "--url", h.URL).CombinedOutput()
	if err != nil || !strings.Contains(string(explain), "candidate policy "+candPath) || !strings.Contains(string(explain), "candidate: chat/free warm at ") {
		t.Errorf("explain (%v):\n%s", err, explain)
	}

	dom := browse(t, chromium, "--dump-dom", h.URL+"/")
	mustContain(t, "the status page", dom, `<h2 id="candidate">Candidate policy (shadow: never applied, never sent)</h2>`, candPath,
		`<td>chat / free</td><td><span class="level level-`, "(live stayed normal): score ")
	screenshot(t, chromium, "status-page-candidate.png", h.URL+"/", "1200,2400")
}
