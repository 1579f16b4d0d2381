package main

import (
	"bytes"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/fakeprovider"
	"github.com/hermes-failover/hermes/rules/config"
)

func testLab(t *testing.T) *lab {
	t.Helper()
	l := &lab{dir: t.TempDir()}
	l.bins.nginx = "nginx"
	if err := l.assignPorts(labDefaultPortBase); err != nil {
		t.Fatal(err)
	}
	return l
}

// TestLabPolicy checks that the lab's policy is the shipped one with the
// lab's servers, that it passes hermes check, and that --fast divides the
// timers it says and no other key.
func TestLabPolicy(t *testing.T) {
	l := testLab(t)
	shipped, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, fast := range []bool{false, true} {
		b, err := labPolicy(l, fast)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(l.dir, "hermes.yaml")
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if code := checkCmd([]string{"--config", path, "--syntax-only"}, &out, &out); code != 0 {
			t.Fatalf("fast=%v: hermes check: %d\n%s\n%s", fast, code, out.String(), b)
		}
		cfg, err := config.Parse(b, path)
		if err != nil {
			t.Fatal(err)
		}
		if cfg.Prometheus.URL != "http://127.0.0.1:19794" || len(cfg.Actuators) != 1 {
			t.Errorf("fast=%v: prometheus %q, %d actuators", fast, cfg.Prometheus.URL, len(cfg.Actuators))
		}
		div := 1
		if fast {
			div = labFast
		}
		for i, lv := range cfg.Levels {
			want := shipped.Levels[i]
			if lv.Below != want.Below || lv.Dwell != want.Dwell/time.Duration(div) || lv.RecoverFor != want.RecoverFor/time.Duration(div) || lv.Cooldown != want.Cooldown/time.Duration(div) {
				t.Errorf("fast=%v: level %s = %+v, want the shipped %+v with timers ÷ %d", fast, lv.Name, lv, want, div)
			}
		}
		if cfg.Failback.Observe != shipped.Failback.Observe/time.Duration(div) || cfg.Failback.ManualAfter != shipped.Failback.ManualAfter ||
			len(cfg.Signals) != len(shipped.Signals) || len(cfg.Alerts) != len(shipped.Alerts) {
			t.Errorf("fast=%v: failback %+v, %d signals, %d alerts; want the shipped %+v ÷ %d (manual_after kept), %d, %d",
				fast, cfg.Failback, len(cfg.Signals), len(cfg.Alerts), shipped.Failback, div, len(shipped.Signals), len(shipped.Alerts))
		}
	}
}

// TestLabFaultAndHeal drives a provider with `hermes lab fault` and
// `hermes lab heal`, and checks that bad arguments are usage errors that
// say what is wrong.
func TestLabFaultAndHeal(t *testing.T) {
	p := fakeprovider.New()
	srv := httptest.NewServer(p.Handler())
	defer srv.Close()
	defer p.Close()
	code, out, errb := hermes(t, "lab", "fault", "free", "30%", "error_body", "--provider", srv.URL)
	if code != 0 || p.Fault("free") != (fakeprovider.Fault{Kind: fakeprovider.ErrorInOK, Percent: 30}) {
		t.Fatalf("lab fault: %d %q %q; the provider has %v", code, out, errb, p.Faults())
	}
	if !strings.Contains(out, "route free: 30% of its requests fail as error_in_200") {
		t.Errorf("lab fault said %q", out)
	}
	if code, out, errb := hermes(t, "lab", "heal", "free", "--provider", srv.URL); code != 0 || len(p.Faults()) != 0 {
		t.Fatalf("lab heal: %d %q %q; the provider has %v", code, out, errb, p.Faults())
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"fault", "free", "130%", "503"}, `percent "130%": want a number in (0, 100]`},
		{[]string{"fault", "free", "30%", "broken"}, `unknown fault kind "broken"`},
		{[]string{"fault", "free", "30%"}, "want 3 argument(s), got 2"},
		{[]string{"heal"}, "want 1 argument(s), got 0"},
		{[]string{"fault", "free", "30%", "healthy"}, "healthy is no fault: hermes lab heal free"},
	} {
		code, _, errb := hermes(t, append(append([]string{"lab"}, tc.args...), "--provider", srv.URL)...)
		if code != 2 || !strings.Contains(errb, tc.want) {
			t.Errorf("lab %v: exit %d, stderr %q; want 2 and %q", tc.args, code, errb, tc.want)
		}
	}
	// A provider that is not there is an error, not a usage error.
	srv.Close()
	if code, _, errb := hermes(t, "lab", "heal", "free", "--provider", srv.URL); code != 1 || !strings.Contains(errb, "fake provider") {
		t.Errorf("lab heal with no provider: exit %d, stderr %q", code, errb)
	}
}

// TestLabServerConfigs checks the lab's proxy and prober files with hermes
// check, and its Alertmanager file with amtool when it is installed.
func TestLabServerConfigs(t *testing.T) {
	l := testLab(t)
	for name, text := range map[string]string{"proxy.yaml": l.proxyConf(), "probe.yaml": l.probeConf(15 * time.Second), "probe-fast.yaml": l.probeConf(labFastInterval)} {
		path := filepath.Join(l.dir, name)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		var out bytes.Buffer
		if code := checkCmd([]string{"--config", path}, &out, &out); code != 0 {
			t.Errorf("hermes check %s: %d\n%s\n%s", name, code, out.String(), text)
		}
	}
	amtool, err := exec.LookPath("amtool")
	if err != nil {
		t.Log("amtool not installed: the Alertmanager file is checked by test/lab's real Alertmanager")
		return
	}
	path := filepath.Join(l.dir, "alertmanager.yml")
	if err := os.WriteFile(path, []byte(l.alertmanagerConf()), 0o644); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command(amtool, "check-config", path).CombinedOutput(); err != nil {
		t.Errorf("amtool check-config: %v\n%s", err, out)
	}
}
