package api_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/web/api"
)

var rewrite = flag.Bool("rewrite", false, "rewrite testdata/contributions.json")

// contributionScores are route free's scores under p in a few cases that
// use every field of the wire form: counted evidence over the signal's own
// window and over a longer one, unproven, missing and failed samples
// (no value), a floor, a cap, a penalty, and idle signals.
func contributionScores(p *evaluator.Policy) []evaluator.Score {
	// Not testenv.HealthyValues: response_size_ratio stays at 0, as in
	// the file the old encoder wrote.
	healthy := map[string]float64{
		"soft_fail_ratio": 0.02, "hard_fail_ratio": 0.0002, "empty_ratio": 0, "error_body_ratio": 0,
		"status_422_ratio": 0.002, "retry_ratio": 0.01, "p99_ratio": 1, "p95_ratio": 1, "throughput_ratio": 1,
		"quota_remaining": 0.8, "quota_forecast": 0.7, "probe_success": 1, "probe_e2e_success": 1, "quality_score": 0.95,
	}
	cases := []map[string]evaluator.Sample{{
		"soft_fail_ratio":     {Value: 0.167, Volume: 18, Counted: true},
		"soft_fail_ratio@5m":  {Value: 0.144, Volume: 90, Counted: true},
		"soft_fail_ratio@15m": {Value: 41.0 / 270, Volume: 270, Counted: true},
		"hard_fail_ratio":     {Value: 0, Volume: 120, Counted: true},
		"hard_fail_ratio@5m":  {Value: 0, Volume: 600, Counted: true},
		"hard_fail_ratio@15m": {Value: 0, Volume: 1800, Counted: true},
		"empty_ratio":         {Value: 0.25, Volume: 8, Counted: true},
		"quota_remaining":     {Value: 0.01},
		"probe_success":       {Value: 0.4},
		"p99_ratio":           {Status: evaluator.StatusMissing, Reason: "no sample"},
		"quality_score":       {Status: evaluator.StatusError, Reason: "query failed: 503 \"busy\" <html>"},
	}, {
		"error_body_ratio": {Value: 0.3, Volume: 1000, Counted: true},
		"retry_ratio":      {Value: 0.123456789},
		"quota_forecast":   {Value: 1e-7},
		"p95_ratio":        {Status: evaluator.StatusMissing, Reason: "no sample"},
	}}
	var out []evaluator.Score
	for i, c := range cases {
		s := evaluator.Snapshot{Time: time.Unix(0, 0)}
		for _, r := range p.Routes() {
			for _, sig := range p.Config.Signals {
				s.Set(r, sig.Name, evaluator.Sample{Value: healthy[sig.Name]})
			}
		}
		for sig, smp := range c {
			s.Set("free", sig, smp)
		}
		out = append(out, evaluator.ComputeScore("free", s, p, i == 1))
	}
	return out
}

// TestContributionWire: the status API writes each route's contributions
// as testdata/contributions.json shows, the bytes Contribution's own
// MarshalJSON wrote before the wire form left the core (the file was
// written with it), and reading them back keeps every field.
func TestContributionWire(t *testing.T) {
	var wire [][]api.Contribution
	for _, sc := range contributionScores(testenv.DefaultPolicy(t, testenv.LongWindows)) {
		wire = append(wire, api.ContributionsOf(sc.Contributions))
	}
	got, err := json.MarshalIndent(wire, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join("testdata", "contributions.json")
	if *rewrite {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("contributions on the wire changed:\n%s\nwant (%s):\n%s", got, file, want)
	}
	var back [][]api.Contribution
	if err := json.Unmarshal(got, &back); err != nil {
		t.Fatal(err)
	}
	again, err := json.MarshalIndent(back, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(again, got) {
		t.Errorf("read back and written again:\n%s\nwas:\n%s", again, got)
	}
}
