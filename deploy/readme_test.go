package deploy

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/internal/testenv"
)

// TestREADMEDeploy follows the README's "Deploy next to your Prometheus"
// with real processes, paths moved to a temporary directory: the shipped
// policy as /etc/hermes/hermes.yaml pointed at a real Prometheus that runs
// deploy/prometheus.yml's hermes job, `hermes check`, the unit's ExecStart
// command line as it is, then step 8: /-/ready answers 200, `hermes ctl
// status` and a pin through HERMES_URL and HERMES_TOKEN_FILE, POST
// /-/reload with the token, and Prometheus scraping Hermes (up == 1).
func TestREADMEDeploy(t *testing.T) {
	hermes := testenv.HermesBinary(t)
	unit, err := os.ReadFile("hermes.service")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	addr := testenv.FreeAddr(t)

	// Step 5: the scrape job of deploy/prometheus.yml, aimed at this Hermes
	// (the rule files are checked by TestPrometheusConfig).
	promCfg, err := os.ReadFile("prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	cfg := strings.NewReplacer("localhost:9797", addr, "  - hermes-watchdog.rules.yml\n", "", "  - hermes-recording.rules.yml\n", "",
		"  - gateway-litellm.rules.yml\n", "", "  - gateway-envoy-ai.rules.yml\n", "",
		"rule_files:\n", "", "scrape_interval: 15s", "scrape_interval: 1s").Replace(string(promCfg))
	prom := testenv.StartTSDB(t, testenv.Prometheus, cfg, "")

	// Step 2: the shipped policy with prometheus.url set, then check.
	policy, err := os.ReadFile("../rules/hermes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "hermes.yaml")
	text := strings.Replace(string(policy), "url: http://127.0.0.1:9090", "url: "+prom.URL, 1)
	if err := os.WriteFile(conf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(hermes, "check", "--config", conf).CombinedOutput(); err != nil {
		t.Fatalf("hermes check: %v\n%s", err, out)
	}

	// Step 7: the unit's command line.
	args := unitCommand(t, strings.ReplaceAll(string(unit), "/usr/local/bin/hermes", hermes), hermes, dir, addr)
	base := "http://" + addr
	srv := testenv.NewServer(t, "hermes", dir, base+"/-/ready", args[0], args[1:]...)
	srv.Start(t)

	// Step 8.
	ctl := func(args ...string) string {
		t.Helper()
		cmd := exec.Command(hermes, append([]string{"ctl"}, args...)...)
		cmd.Env = append(os.Environ(), "HERMES_URL="+base, "HERMES_TOKEN_FILE="+filepath.Join(dir, "admin-token"))
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("hermes ctl %q: %v\n%s", args, err, out)
		}
		return string(out)
	}
	if out := ctl("status"); !strings.Contains(out, "service chat") {
		t.Errorf("ctl status:\n%s", out)
	}
	if out := ctl("pin", "chat", "paid-premium", "--reason", "README test", "--for", "1h"); !strings.Contains(out, "pin: ") {
		t.Errorf("ctl pin: %s", out)
	}
	req, _ := http.NewRequest(http.MethodPost, base+"/-/reload", nil)
	req.Header.Set("Authorization", "Bearer secret")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("POST /-/reload with the token: %s", resp.Status)
	}
	testenv.Eventually(t, time.Minute, `Prometheus scrapes Hermes (up{job="hermes"} == 1)`, func() bool {
		v, err := prom.QueryValue(`up{job="hermes"}`)
		return err == nil && v == 1
	})
	for _, f := range []string{"audit.log", "overrides.json"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Size() == 0 {
			t.Errorf("%s in the state directory: %v", f, err)
		}
	}
}
