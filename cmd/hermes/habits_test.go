package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tokenFile writes token to a file and returns its path.
func tokenFile(t *testing.T, token string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(path, []byte(token+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestCtlFlagsAnywhere: --url and --token-file work before the action,
// after it and after its arguments, as people type them.
func TestCtlFlagsAnywhere(t *testing.T) {
	b, url := serveBackend(t, "tok")
	token := tokenFile(t, "tok")
	for _, args := range [][]string{
		{"ctl", "--url", url, "--token-file", token, "pin", "chat", "paid-premium", "--reason", "before"},
		{"ctl", "pin", "--url", url, "chat", "paid-premium", "--reason", "between", "--token-file", token},
		{"ctl", "pin", "chat", "paid-premium", "--reason", "after", "--url", url, "--token-file", token},
	} {
		if code, out, errb := hermes(t, args...); code != 0 {
			t.Errorf("%q: exit %d %s%s", args, code, out, errb)
		}
	}
	if len(b.calls) != 3 {
		t.Errorf("calls %q", b.calls)
	}
}

// TestCtlEnvironment: HERMES_URL and HERMES_TOKEN_FILE stand for --url and
// --token-file; a flag still wins.
func TestCtlEnvironment(t *testing.T) {
	b, url := serveBackend(t, "tok")
	t.Setenv(envURL, url)
	t.Setenv(envTokenFile, tokenFile(t, "tok"))
	if code, out, errb := hermes(t, "ctl", "pause", "chat", "--reason", "from the environment"); code != 0 {
		t.Fatalf("exit %d %s%s", code, out, errb)
	}
	if code, _, errb := hermes(t, "ctl", "status", "--url", "http://127.0.0.1:1"); code != 1 || !strings.Contains(errb, "127.0.0.1:1") {
		t.Errorf("--url over HERMES_URL: exit %d %s", code, errb)
	}
	if code, out, errb := hermes(t, "explain", "--route", "free"); code != 0 || !strings.Contains(out, "route free") {
		t.Errorf("explain with HERMES_URL: exit %d %s", code, errb)
	}
	if len(b.calls) != 1 {
		t.Errorf("calls %q", b.calls)
	}
}

// TestCtlErrorsNameTheFlag: an error a flag would have avoided names it.
func TestCtlErrorsNameTheFlag(t *testing.T) {
	_, url := serveBackend(t, "tok")
	code, _, errb := hermes(t, "ctl", "release", "free", "--reason", "x", "--url", url)
	if code != 1 || !strings.Contains(errb, "admin token required; give --token-file FILE (or set HERMES_TOKEN_FILE)") {
		t.Errorf("no token: exit %d %s", code, errb)
	}
	code, _, errb = hermes(t, "ctl", "release", "free", "--reason", "x", "--url", url, "--token-file", tokenFile(t, "wrong"))
	if code != 1 || !strings.Contains(errb, "is not the one of hermes run's --web.admin-token-file") {
		t.Errorf("wrong token: exit %d %s", code, errb)
	}
	if code, _, errb = hermes(t, "ctl", "relase", "free"); code != 2 || !strings.Contains(errb, `unknown action "relase"; the actions are status, release, pin`) {
		t.Errorf("typo in the action: exit %d %s", code, errb)
	}
}

// TestExplainListsTheRoutes: a typo in --route lists the routes there are.
func TestExplainListsTheRoutes(t *testing.T) {
	_, url := serveBackend(t, "")
	code, _, errb := hermes(t, "explain", "--url", url, "--route", "fre")
	if code != 1 || !strings.Contains(errb, `route "fre" is in no service of the running configuration; the routes are "free", "paid-standard"`) {
		t.Errorf("exit %d %s", code, errb)
	}
}

// TestHelpShowsTwoDashes: every flag in every help is spelled --name, as
// in Prometheus's help and in docs/commands.md.
func TestHelpShowsTwoDashes(t *testing.T) {
	for name := range helpCases() {
		_, out, _ := hermes(t, append(strings.Fields(name), "--help")...)
		for line := range strings.Lines(out) {
			if strings.HasPrefix(line, "  -") && !strings.HasPrefix(line, "  --") {
				t.Errorf("hermes %s --help: %q has one dash", name, line)
			}
		}
	}
}

// TestConfigFileSpelling: --config.file, Prometheus's spelling, is
// --config.
func TestConfigFileSpelling(t *testing.T) {
	if code, out, errb := hermes(t, "check", "--config.file", "../../testdata/config/minimal.good.yaml"); code != 0 {
		t.Errorf("check --config.file: exit %d %s%s", code, out, errb)
	}
	if code, _, errb := hermes(t, "check", "--config.file=../../testdata/config/unknown_key.bad.yaml"); code == 0 || !strings.Contains(errb, "unknown_key.bad.yaml") {
		t.Errorf("check --config.file of a bad file: exit %d %s", code, errb)
	}
}

// TestTokenFileWithoutAdminAPI: a token file that guards nothing stops
// Hermes at start-up, naming the flags to add.
func TestTokenFileWithoutAdminAPI(t *testing.T) {
	code, _, errb := hermes(t, "run", "--config", "../../testdata/config/minimal.good.yaml", "--web.admin-token-file", tokenFile(t, "tok"))
	if code != 2 || !strings.Contains(errb, "add --web.enable-admin-api (hermes ctl) and --web.enable-lifecycle (POST /-/reload)") {
		t.Errorf("exit %d %s", code, errb)
	}
}

// TestNoConnectionLimitIsRefused: --web.max-connections 0 would serve no
// one; it stops Hermes at start-up rather than meaning "no limit".
func TestNoConnectionLimitIsRefused(t *testing.T) {
	code, _, errb := hermes(t, "run", "--config", "../../testdata/config/minimal.good.yaml", "--web.max-connections", "0")
	if code != 2 || !strings.Contains(errb, "--web.max-connections must be at least 1") {
		t.Errorf("exit %d %s", code, errb)
	}
}
