package probe_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/internal/fakeopenai"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// query runs an instant query and returns its single value (ok false
// without exactly one).
func query(promAddr, q string) (float64, bool, string) {
	resp, err := http.Get("http://" + promAddr + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		return 0, false, err.Error()
	}
	defer resp.Body.Close()
	var r struct {
		Data struct {
			Result []struct {
				Value []any `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		return 0, false, err.Error()
	}
	if len(r.Data.Result) != 1 {
		return 0, false, fmt.Sprint(r.Data.Result)
	}
	s, _ := r.Data.Result[0].Value[1].(string)
	v, err := strconv.ParseFloat(s, 64)
	return v, err == nil, s
}

// TestProbeResultsInPrometheus: a real Prometheus scrapes `hermes probe`;
// the failure series of llm_probe_results_total is there at 0 before the
// route first fails, so increase() sees the first failures (a series
// that first appeared at 1 would hide its first increment).
func TestProbeResultsInPrometheus(t *testing.T) {
	promBin := testenv.Binary(t, "prometheus")
	dir := t.TempDir()
	bin := build(t, dir)
	free := fakeopenai.Start(t)
	probeYAML := filepath.Join(dir, "probe.yaml")
	write(t, probeYAML, fmt.Sprintf(`defaults:
  liveness: {disabled: true}
  readiness: {disabled: true}
  e2e: {interval: 2s, timeout: 1500ms}
  boundary: {disabled: true}
targets:
  - {route: free, base_url: %s/v1, model: %s, probes: [short_answer]}
`, free.URL, fakeopenai.Model))
	probeAddr := testenv.FreeAddr(t)
	prober := testenv.Start(t, "hermes-probe", exec.Command(bin, "probe", "--config", probeYAML, "--web.listen-address", probeAddr))
	testenv.WaitHTTP(t, "http://"+probeAddr+"/-/ready", 30*time.Second, prober)
	promAddr := testenv.FreeAddr(t)
	promYAML := filepath.Join(dir, "prometheus.yml")
	write(t, promYAML, fmt.Sprintf("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n  - job_name: hermes-probe\n    static_configs:\n      - targets: ['%s']\n", probeAddr))
	prom := testenv.Start(t, "prometheus", exec.Command(promBin, "--config.file="+promYAML,
		"--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+promAddr))
	testenv.WaitHTTP(t, "http://"+promAddr+"/-/ready", 30*time.Second, prom)

	const failures = `llm_probe_results_total{route="free",layer="e2e",probe="short_answer",verdict="hard_fail",reason="http_5xx"}`
	const ok = `llm_probe_results_total{route="free",layer="e2e",probe="short_answer",verdict="ok",reason=""}`
	eventually(t, 30*time.Second, "the 5xx series at 0 in Prometheus, ok results counted", func() (bool, string) {
		n, has, detail := query(promAddr, "count_over_time("+failures+"[1m])")
		if !has || n < 3 {
			return false, "5xx samples: " + detail
		}
		f, _, _ := query(promAddr, failures)
		o, _, detail := query(promAddr, ok)
		return f == 0 && o >= 2, fmt.Sprintf("5xx %v, ok %s", f, detail)
	})

	free.SetMode(fakeopenai.ServerError)
	eventually(t, 30*time.Second, "increase() counting the 5xx results", func() (bool, string) {
		raw, _, _ := query(promAddr, failures)
		inc, has, detail := query(promAddr, "increase("+failures+"[1m])")
		// increase() extrapolates, so it reads a little more than the
		// counter; without the 0 before them it would read one less.
		return has && raw >= 1 && inc >= raw, fmt.Sprintf("counter %v, increase %s", raw, detail)
	})
}
