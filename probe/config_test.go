package probe

import (
	"os"
	"strings"
	"testing"
	"time"
)

func TestLoadGood(t *testing.T) {
	cfg, err := Load("testdata/probe.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	free, paid := cfg.Targets[0], cfg.Targets[1]
	if free.Readiness.Interval != 10*time.Second || free.E2E.Interval != 2*time.Minute || free.E2E.Timeout != 30*time.Second ||
		free.Liveness.Interval != 30*time.Second || free.Boundary.Interval != 24*time.Hour || free.TokenBudget.Tokens != 100000 {
		t.Errorf("defaults not applied: %+v", free)
	}
	// e2e counts each result as itself; readiness and liveness keep 2.
	if free.E2E.FailureThreshold != 1 || free.Readiness.FailureThreshold != 2 || free.Liveness.FailureThreshold != 2 || free.Boundary.FailureThreshold != 1 {
		t.Errorf("failure thresholds: liveness %d, readiness %d, e2e %d, boundary %d; want 2, 2, 1, 1",
			free.Liveness.FailureThreshold, free.Readiness.FailureThreshold, free.E2E.FailureThreshold, free.Boundary.FailureThreshold)
	}
	if !strings.HasSuffix(free.APIKeyFile, "testdata/free.key") {
		t.Errorf("api_key_file not resolved: %s", free.APIKeyFile)
	}
	if !paid.Boundary.Disabled || len(cfg.Prompts) != 4 {
		t.Errorf("paid: %+v, %d prompts", paid, len(cfg.Prompts))
	}
	data, _ := os.ReadFile("testdata/probe.good.yaml")
	if !LooksLikeConfig(data) {
		t.Error("not recognised as a probe config")
	}
	if LooksLikeConfig([]byte("global: {}\nsignals: []\n")) {
		t.Error("a Hermes config recognised as a probe config")
	}
}

func TestLoadBad(t *testing.T) {
	for file, want := range map[string][]string{
		"testdata/probe.bad.yaml": {
			`probe.bad.yaml:2: defaults.e2e.timeout: 3m0s is longer than the interval 2m0s`,
			`probe.bad.yaml:5: targets[0].base_url: "ftp://x" is not an http(s) URL`,
			`probe.bad.yaml:6: targets[0].model: must be set`,
			`probe.bad.yaml:8: targets[0].api_key_env: set api_key_file or api_key_env, not both`,
			`probe.bad.yaml:9: targets[0].probes: unknown prompt "nope"`,
			`probe.bad.yaml:10: targets[1].route: "free" is probed twice`,
			`probe.bad.yaml:14: targets[1].readiness.interval: 100ms is below the minimum 1s`,
			`probe.bad.yaml:14: targets[1].readiness.failure_threshold: must be at least 1`,
			`probe.bad.yaml:16: prompts[0].name: "bad name" is not a valid probe name`,
			`probe.bad.yaml:17: prompts[0].messages[0].role: "robot"`,
			`probe.bad.yaml:17: prompts[0].messages[0].content: must not be empty`,
			`probe.bad.yaml:18: prompts[0].validation: schema: not JSON`,
			`probe.bad.yaml:18: prompts[0].validation: min_length, fallback_max_chars and max_body_bytes must not be negative`,
			`probe.bad.yaml:21: prompts[1].validation.format: a completion is read in its target's API: set api: anthropic_messages on the target`,
			`probe.bad.yaml:13: targets[1].api: "messages": want openai_chat, anthropic_messages or openai_responses`,
		},
		"testdata/probe_keys.bad.yaml": {
			`probe_keys.bad.yaml:2: defaults.liveness.interval: duration 30 needs a unit`,
			`probe_keys.bad.yaml:7: targets[0].bogus: unknown key`,
		},
	} {
		_, err := Load(file)
		if err == nil {
			t.Fatalf("%s: no error", file)
		}
		for _, w := range want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("%s: missing %q in:\n%v", file, w, err)
			}
		}
	}
}
