package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-failover/hermes/rules"
)

// TestReplicaRefusesBackendsWithoutStamp: with --replica, an actuator
// whose backend cannot store the writer's stamp (a webhook) would be
// written by both replicas, so `hermes check --replica` and `hermes run
// --replica` refuse it, naming the actuator and its line; without
// --replica the same configuration is fine. A replica name that backends
// cannot carry is refused too.
func TestReplicaRefusesBackendsWithoutStamp(t *testing.T) {
	dir := t.TempDir()
	acts := "  - type: file\n    path: " + filepath.Join(dir, "split.json") + "\n" +
		"  - name: flags\n    type: webhook\n    url: http://127.0.0.1:1/hook\n    secret: test-signing-key\n"
	body := strings.Replace(string(rules.DefaultYAML), "actuators: []\n", "actuators:\n"+acts, 1)
	path := filepath.Join(dir, "hermes.yaml")
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	line := 0
	for n, l := range strings.Split(body, "\n") {
		if strings.Contains(l, "- name: flags") {
			line = n + 1
		}
	}
	want := fmt.Sprintf("%s:%d: actuators[1] (flags): a webhook actuator cannot store the writer's stamp", path, line)

	if code, out, errb := hermes(t, "check", "--config", path); code != 0 || !strings.HasPrefix(out, "config OK") {
		t.Fatalf("check without --replica: exit %d, stderr:\n%s", code, errb)
	}
	if code, out, errb := hermes(t, "check", "--config", path, "--replica", "hermes-a"); code != 1 || out != "" || !strings.Contains(errb, want) {
		t.Errorf("check --replica: exit %d, stderr:\n%s\nwant exit 1 and %q", code, errb, want)
	}
	code, _, errb := hermes(t, "run", "--config", path, "--replica", "hermes-a",
		"--web.listen-address", "127.0.0.1:0", "--audit.file", filepath.Join(dir, "audit.log"))
	if code != 1 || !strings.Contains(errb, want) {
		t.Errorf("run --replica: exit %d, stderr:\n%s\nwant exit 1 and %q", code, errb, want)
	}
	if strings.Contains(errb, "actuators[0]") {
		t.Errorf("run --replica refused the file actuator, which carries the stamp:\n%s", errb)
	}

	for _, args := range [][]string{{"check", "--replica", "a b"}, {"run", "--config", path, "--replica", "a'b", "--web.listen-address", "127.0.0.1:0"}} {
		if code, _, errb := hermes(t, args...); code != 1 || !strings.Contains(errb, "a replica name is") {
			t.Errorf("%v: exit %d, stderr:\n%s\nwant exit 1 and the rule for replica names", args, code, errb)
		}
	}
}
