package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hermes-failover/hermes/rules"
)

func TestCheckDefault(t *testing.T) {
	cfg, err := rules.Default()
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("config OK: %d signals, %d services, %d alert rules\n", len(cfg.Signals), len(cfg.Services), len(cfg.Alerts))
	for _, args := range [][]string{nil, {"--config", "../../rules/hermes.yaml"}} {
		var stdout, stderr bytes.Buffer
		if code := checkCmd(args, &stdout, &stderr); code != 0 {
			t.Fatalf("check %q = %d, stderr:\n%s", args, code, stderr.String())
		}
		if got := stdout.String(); got != want {
			t.Errorf("check %q stdout = %q, want %q", args, got, want)
		}
		if stderr.Len() != 0 {
			t.Errorf("check %q stderr = %q", args, stderr.String())
		}
	}
}

func TestCheckFixtures(t *testing.T) {
	files, err := filepath.Glob("../../testdata/config/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no fixtures: %v", err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := checkCmd([]string{"--config", path}, &stdout, &stderr)
			if strings.HasSuffix(path, ".good.yaml") {
				if code != 0 {
					t.Fatalf("exit %d, stderr:\n%s", code, stderr.String())
				}
				return
			}
			if code != 1 {
				t.Fatalf("exit %d, want 1; stdout %q", code, stdout.String())
			}
			if stdout.Len() != 0 {
				t.Errorf("stdout = %q, want nothing", stdout.String())
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			out := stderr.String()
			for line := range strings.Lines(string(data)) {
				want, ok := strings.CutPrefix(strings.TrimSpace(line), "# want:")
				if !ok {
					break
				}
				if !strings.Contains(out, strings.TrimSpace(want)) {
					t.Errorf("stderr does not contain %q:\n%s", want, out)
				}
			}
			// One problem per line, each naming the file.
			for line := range strings.Lines(out) {
				if !strings.HasPrefix(line, path+":") {
					t.Errorf("line %q does not start with %q", line, path+":")
				}
			}
		})
	}
}

func TestCheckUsage(t *testing.T) {
	for _, args := range [][]string{{"--nosuch"}, {"extra"}, {"--config"}} {
		var stdout, stderr bytes.Buffer
		if code := checkCmd(args, &stdout, &stderr); code != 2 {
			t.Errorf("check %q = %d, want 2", args, code)
		}
	}
	var stdout, stderr bytes.Buffer
	if code := checkCmd([]string{"--config", "does-not-exist.yaml"}, &stdout, &stderr); code != 1 ||
		!strings.Contains(stderr.String(), "does-not-exist.yaml") {
		t.Errorf("missing file: code %d, stderr %q", code, stderr.String())
	}
}
