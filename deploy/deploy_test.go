package deploy

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hermes-failover/hermes/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// TestSystemdUnit verifies hermes.service with systemd-analyze (the unit
// pointed at a freshly built hermes, which verify requires to exist) and
// runs its ExecStart command line, paths moved to a temporary directory:
// every flag must be one `hermes run` knows, so it fails only on the
// configuration file that is not there.
func TestSystemdUnit(t *testing.T) {
	hermes := testenv.HermesBinary(t)
	dir := t.TempDir()
	text := verifyUnit(t, "hermes.service", hermes, dir)

	args := unitCommand(t, text, hermes, dir, "127.0.0.1:0")
	cmd := exec.Command(args[0], args[1:]...)
	out, err := cmd.CombinedOutput()
	if code := cmd.ProcessState.ExitCode(); code != 1 || !strings.Contains(string(out), filepath.Join(dir, "hermes.yaml")) {
		t.Errorf("%q: exit %d (%v), want 1 for the missing configuration:\n%s", args, code, err, out)
	}
}

// verifyUnit verifies the shipped unit file name with systemd-analyze,
// pointed at hermes (verify requires the binary to exist), from a copy in
// dir, and returns the copy's text.
func verifyUnit(t *testing.T, name, hermes, dir string) string {
	t.Helper()
	analyze := testenv.Binary(t, "systemd-analyze")
	unit, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.ReplaceAll(string(unit), "/usr/local/bin/hermes", hermes)
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(analyze, "verify", path).CombinedOutput()
	// verify exits 0 on unknown keys and bad values, which it only prints.
	if err != nil || len(strings.TrimSpace(string(out))) > 0 {
		t.Fatalf("systemd-analyze verify %s: %v\n%s", name, err, out)
	}
	return text
}

// unitCommand is the unit's ExecStart command line (unit is its text, the
// binary already replaced by hermes) with /etc/hermes and /var/lib/hermes
// moved to dir, the listen address to addr, and the admin token written
// to dir/admin-token as the unit's comment says.
func unitCommand(t *testing.T, unit, hermes, dir, addr string) []string {
	t.Helper()
	args := execStart(t, unit)
	if len(args) < 2 || args[0] != hermes || args[1] != "run" {
		t.Fatalf("ExecStart = %q, want %s run …", args, hermes)
	}
	if !slices.Contains(args, `--restore.selector=job="hermes"`) {
		t.Errorf("ExecStart = %q: want --restore.selector=job=\"hermes\" as one word", args)
	}
	for _, want := range []string{"--web.enable-admin-api", "--web.enable-lifecycle", "--web.admin-token-file"} {
		if !slices.Contains(args, want) {
			t.Errorf("ExecStart = %q: want %s (docs/runbooks.md uses hermes ctl and POST /-/reload)", args, want)
		}
	}
	token := filepath.Join(dir, "admin-token")
	if err := os.WriteFile(token, []byte("secret\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	moved := strings.NewReplacer("/etc/hermes/admin-token", token, "/etc/hermes", dir, "/var/lib/hermes", dir, ":9797", addr)
	for i := range args {
		args[i] = moved.Replace(args[i])
	}
	return args
}

// execStart returns the words of the unit's ExecStart=, continuation lines
// joined. It splits on blanks and honours single and double quotes, the
// part of systemd's quoting the shipped unit uses (no escapes).
func execStart(t *testing.T, unit string) []string {
	t.Helper()
	unit = strings.ReplaceAll(unit, "\\\n", " ")
	for line := range strings.Lines(unit) {
		rest, ok := strings.CutPrefix(strings.TrimSpace(line), "ExecStart=")
		if !ok {
			continue
		}
		var words []string
		var word strings.Builder
		quote, inWord := rune(0), false
		for _, r := range rest {
			switch {
			case quote != 0 && r == quote:
				quote = 0
			case quote != 0:
				word.WriteRune(r)
			case r == '\'' || r == '"':
				quote, inWord = r, true
			case r == ' ' || r == '\t':
				if inWord {
					words = append(words, word.String())
					word.Reset()
					inWord = false
				}
			default:
				word.WriteRune(r)
				inWord = true
			}
		}
		if inWord {
			words = append(words, word.String())
		}
		return words
	}
	t.Fatal("no ExecStart= in the unit")
	return nil
}

// TestPrometheusConfig checks prometheus.yml with promtool next to the
// shipped rule files, as the comment in it says to install them, and that
// its job names are the ones the rules and the unit expect.
func TestPrometheusConfig(t *testing.T) {
	promtool := testenv.Binary(t, "promtool")
	dir := t.TempDir()
	files := map[string]string{"prometheus.yml": "prometheus.yml"}
	rules, err := filepath.Glob("../rules/prometheus/*.rules.yml")
	if err != nil || len(rules) < 2 {
		t.Fatalf("rule files: %v %v", rules, err)
	}
	for _, r := range rules {
		files[filepath.Base(r)] = r
	}
	for name, src := range files {
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(promtool, "check", "config", filepath.Join(dir, "prometheus.yml")).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check config: %v\n%s", err, out)
	}
	// Each shipped rule file is loaded: promtool names those it found rules in.
	for _, r := range rules {
		if !strings.Contains(string(out), filepath.Base(r)) {
			t.Errorf("promtool did not check %s:\n%s", filepath.Base(r), out)
		}
	}
	cfg, _ := os.ReadFile("prometheus.yml")
	watchdog, _ := os.ReadFile("../rules/prometheus/hermes-watchdog.rules.yml")
	unit, _ := os.ReadFile("hermes.service")
	for _, want := range []string{"job_name: hermes\n", "job_name: hermes-probe\n", "job_name: hermes-proxy\n", "localhost:9797", "localhost:9798", "localhost:9799"} {
		if !strings.Contains(string(cfg), want) {
			t.Errorf("prometheus.yml lacks %q", want)
		}
	}
	if !strings.Contains(string(watchdog), `up{job="hermes"}`) || !strings.Contains(string(unit), `--restore.selector=job="hermes"`) {
		t.Error(`the watchdog rules and the unit no longer both use job="hermes"`)
	}
}
