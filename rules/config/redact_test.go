package config

import (
	"os"
	"strings"
	"testing"
)

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"http://alice:s3cret@prom:9090/api":  "http://alice:xxxxx@prom:9090/api",
		"http://alice:s3cret@prom:bad/api":   "http://alice:xxxxx@prom:bad/api",
		"http://alice:s3:cr@et@prom:bad":     "http://alice:xxxxx@prom:bad",
		"alice:s3cret@prom:9090":             "alice:xxxxx@prom:9090",
		"http://alice@prom:9090":             "http://alice@prom:9090",
		"http://prom:9090/?q=a@b":            "http://prom:9090/?q=a@b",
		"http://prom:bad":                    "http://prom:bad",
		"http://al ice:s3cret@prom:9090/x y": "http://al ice:xxxxx@prom:9090/x y",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestValidateNeverEchoesAPassword checks malformed Prometheus and
// Alertmanager URLs holding a password: the errors `hermes check` and a
// rejected reload print (and log and audit) must not contain it.
func TestValidateNeverEchoesAPassword(t *testing.T) {
	base, err := os.ReadFile("../../testdata/config/alerting.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"http://alice:s3cret@prom:bad", "http://alice:s3cret@prom:9090\x7f", "ftp://alice:s3cret@prom"} {
		cfg, err := Parse(base, "hermes.yaml")
		if err != nil {
			t.Fatal(err)
		}
		cfg.Prometheus.URL = bad
		if len(cfg.Alerting.Alertmanagers) > 0 {
			cfg.Alerting.Alertmanagers[0].URL = bad
		}
		err = cfg.Validate()
		if err == nil {
			t.Fatalf("%q validated", bad)
		}
		if strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), "alice:xxxxx@") {
			t.Errorf("validating %q: %v", bad, err)
		}
	}
}
