package config

import (
	"strings"
	"testing"
)

// TestDefaultAlertsHaveRunbooks keeps every shipped alert linked to its
// section of docs/runbooks.md.
func TestDefaultAlertsHaveRunbooks(t *testing.T) {
	cfg, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range cfg.Alerts {
		want := "docs/runbooks.md#" + strings.ToLower(a.Name)
		if !strings.HasSuffix(a.RunbookURL, want) {
			t.Errorf("%s: runbook_url %q, want …%s", a.Name, a.RunbookURL, want)
		}
	}
}

// TestLatencyAloneNeverFailsOver: the default penalties of the latency
// signals (P99 and time to first token) together stay above the failover
// level, and the time to first token is scored.
func TestLatencyAloneNeverFailsOver(t *testing.T) {
	cfg, err := Default()
	if err != nil {
		t.Fatal(err)
	}
	latency, ttft := 0.0, false
	for _, p := range cfg.Scoring.Penalties {
		switch p.Signal {
		case "p99_ratio", "p95_ratio", "ttft_ratio":
			latency += p.Max
			ttft = ttft || p.Signal == "ttft_ratio"
		}
	}
	for _, l := range cfg.Levels {
		if l.Name == "failover" && 100-latency < l.Below {
			t.Errorf("latency penalties reach %v points: a score of %v is below failover's %v", latency, 100-latency, l.Below)
		}
	}
	if !ttft {
		t.Error("ttft_ratio has no penalty")
	}
}
