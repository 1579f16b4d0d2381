// Package probe_test runs `hermes probe` end to end: a real Prometheus
// scrapes a real `hermes probe` process that probes two fake OpenAI APIs
// (real HTTP servers in the test process), and a real `hermes run` with
// the file actuator reads the probe series from Prometheus. Breaking the
// free route's API fails it over; healing it starts the staged failback.
//
//	CI=true go test -count=1 -v ./test/probe/
package probe_test

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

	"github.com/hermes-failover/hermes/internal/fakeopenai"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// build compiles ./cmd/hermes into dir.
func build(t *testing.T, dir string) string {
	t.Helper()
	bin := filepath.Join(dir, "hermes")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/hermes")
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

func write(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
}

const probeConfig = `defaults:
  liveness: {interval: 5s, timeout: 1s, failure_threshold: 1}
  readiness: {interval: 1s, timeout: 800ms, failure_threshold: 1}
  e2e: {interval: 2s, timeout: 1500ms, failure_threshold: 1}
  boundary: {disabled: true}
targets:
  - route: free
    base_url: %s/v1
    model: %s
    api_key_file: free.key
    probes: [short_answer, summary]
  - route: paid-standard
    base_url: %s/v1
    model: %s
    api_key_env: HERMES_TEST_PAID_KEY
    probes: [short_answer]
`

// hermesConfig is the shipped policy's probe signal with windows of
// seconds, and the levels of test/integration.
const hermesConfig = `global:
  evaluation_interval: 1s
  query_timeout: 800ms
prometheus:
  url: %s
signals:
  - name: probe_success
    help: probe success over 10s, the lower of readiness and scaled e2e
    query: |
      min by (route) (
        label_replace(avg by (route) (avg_over_time(llm_probe_success{layer=~"readiness|"}[10s])), "part", "readiness", "", "")
      or
        label_replace(0.825 + 0.175 * avg by (route) (avg_over_time(llm_probe_success{layer="e2e"}[10s])), "part", "e2e", "", "")
      )
scoring:
  penalties:
    - {signal: probe_success, below: 0.95, points_per_unit: 200, max: 100}
  caps:
    - {signal: probe_success, below: 0.5, max_score: 40}
levels:
  - {name: warm, below: 85, recover_above: 90, dwell: 1s, recover_for: 3s, cooldown: 3s, primary_percent: 95, retries: true}
  - {name: shed, below: 75, recover_above: 82, dwell: 2s, recover_for: 3s, cooldown: 3s, primary_percent: 50, retries: true}
  - {name: failover, below: 60, recover_above: 80, dwell: 3s, recover_for: 3s, cooldown: 5s, primary_percent: 0, retries: false}
failback:
  stages: [10, 30, 50, 100]
  observe: 3s
  min_score: 80
  max_completed: 1
  window: 24h
  manual_after: 10m
services:
  - name: chat
    routes: [free, paid-standard]
actuators:
  - type: file
    path: %s
`

type status struct {
	Services []struct {
		Name    string         `json:"name"`
		Weights map[string]int `json:"weights"`
		Routes  []struct {
			Name          string  `json:"name"`
			Level         string  `json:"level"`
			Score         float64 `json:"score"`
			FailbackStage int     `json:"failback_stage"`
		} `json:"routes"`
	} `json:"services"`
}

func getStatus(url string) (status, error) {
	var s status
	c := &http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url + "/api/v1/status")
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	return s, json.NewDecoder(resp.Body).Decode(&s)
}

// free returns route free's level, failback stage and score.
func (s status) free() (string, int, float64) {
	for _, svc := range s.Services {
		for _, r := range svc.Routes {
			if r.Name == "free" {
				return r.Level, r.FailbackStage, r.Score
			}
		}
	}
	return "", 0, 0
}

// eventually polls cond until it holds or timeout passes.
func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	start := time.Now()
	for {
		ok, detail := cond()
		if ok {
			t.Logf("%s after %s", what, time.Since(start).Round(100*time.Millisecond))
			return
		}
		if time.Since(start) > timeout {
			t.Fatalf("timed out after %s waiting for %s; last: %s", timeout, what, detail)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func TestProbeDrivesFailoverAndFailback(t *testing.T) {
	promBin := testenv.Binary(t, "prometheus")
	dir := t.TempDir()
	bin := build(t, dir)

	free, paid := fakeopenai.Start(t), fakeopenai.Start(t)
	free.APIKey, paid.APIKey = "sk-free-test", "sk-paid-test"
	t.Setenv("HERMES_TEST_PAID_KEY", "sk-paid-test")
	write(t, filepath.Join(dir, "free.key"), "sk-free-test\n")
	probeYAML := filepath.Join(dir, "probe.yaml")
	write(t, probeYAML, fmt.Sprintf(probeConfig, free.URL, fakeopenai.Model, paid.URL, fakeopenai.Model))
	if out, err := exec.Command(bin, "check", "--config", probeYAML).CombinedOutput(); err != nil {
		t.Fatalf("hermes check on the probe config: %v\n%s", err, out)
	}

	probeAddr := testenv.FreeAddr(t)
	prober := testenv.Start(t, "hermes-probe", exec.Command(bin, "probe", "--config", probeYAML, "--web.listen-address", probeAddr, "--log.level", "debug"))
	testenv.WaitHTTP(t, "http://"+probeAddr+"/-/ready", 30*time.Second, prober)

	promAddr := testenv.FreeAddr(t)
	promYAML := filepath.Join(dir, "prometheus.yml")
	write(t, promYAML, fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: hermes-probe\n    static_configs:\n      - targets: ['%s']\n", probeAddr))
	prom := testenv.Start(t, "prometheus", exec.Command(promBin, "--config.file="+promYAML,
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+promAddr))
	testenv.WaitHTTP(t, "http://"+promAddr+"/-/ready", 30*time.Second, prom)

	split := filepath.Join(dir, "split.json")
	hermesYAML := filepath.Join(dir, "hermes.yaml")
	write(t, hermesYAML, fmt.Sprintf(hermesConfig, "http://"+promAddr, split))
	hermesAddr := testenv.FreeAddr(t)
	run := testenv.Start(t, "hermes-run", exec.Command(bin, "run", "--config", hermesYAML,
		"--web.listen-address", hermesAddr, "--audit.file", filepath.Join(dir, "audit.jsonl")))
	hermesURL := "http://" + hermesAddr
	testenv.WaitHTTP(t, hermesURL+"/-/ready", 60*time.Second, run)

	// The probe series reach Prometheus, labelled by layer.
	eventually(t, 30*time.Second, "readiness and e2e series in Prometheus", func() (bool, string) {
		resp, err := http.Get("http://" + promAddr + `/api/v1/query?query=count(llm_probe_success{layer=~"readiness|e2e|liveness"}==1)`)
		if err != nil {
			return false, err.Error()
		}
		defer resp.Body.Close()
		var r struct {
			Data struct {
				Result []struct {
					Value []any `json:"value"`
				} `json:"result"`
			} `json:"data"`
		}
		json.NewDecoder(resp.Body).Decode(&r)
		// free: liveness, readiness, 2 e2e; paid: liveness, readiness, 1 e2e.
		if len(r.Data.Result) == 1 && r.Data.Result[0].Value[1] == "7" {
			return true, ""
		}
		return false, fmt.Sprint(r.Data.Result)
	})
	eventually(t, 30*time.Second, "free healthy at normal", func() (bool, string) {
		s, err := getStatus(hermesURL)
		level, _, score := s.free()
		return err == nil && level == "normal" && score >= 99, fmt.Sprintf("%s %.1f %v", level, score, err)
	})

	// Break free: its API answers 503, so readiness fails.
	free.SetMode(fakeopenai.ServerError)
	eventually(t, 90*time.Second, "free failed over", func() (bool, string) {
		s, err := getStatus(hermesURL)
		level, _, score := s.free()
		return level == "failover", fmt.Sprintf("%s %.1f %v", level, score, err)
	})
	eventually(t, 30*time.Second, "the file actuator drains free", func() (bool, string) {
		b, _ := os.ReadFile(split)
		return strings.Contains(string(b), `"free":0`) || strings.Contains(string(b), `"free": 0`), string(b)
	})

	// Heal it: probes recover, and the staged failback starts.
	free.SetMode(fakeopenai.Healthy)
	eventually(t, 120*time.Second, "staged failback started", func() (bool, string) {
		s, err := getStatus(hermesURL)
		level, stage, score := s.free()
		return level == "failover" && stage >= 1 || level == "normal", fmt.Sprintf("%s stage %d %.1f %v", level, stage, score, err)
	})
	eventually(t, 30*time.Second, "the file actuator sends free a share", func() (bool, string) {
		b, _ := os.ReadFile(split)
		return !strings.Contains(string(b), `"free":0`) && !strings.Contains(string(b), `"free": 0`), string(b)
	})
}
