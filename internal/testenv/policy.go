package testenv

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
)

// HardFailScoring is the part of a small Hermes configuration that the
// alert tests share: a Prometheus, one signal, hard_fail_ratio, and a score
// of 100 − 100 × hard_fail_ratio. A test adds global, levels, failback,
// services and alerts.
const HardFailScoring = `
prometheus: {url: "http://127.0.0.1:9090"}
signals:
  - name: hard_fail_ratio
    query: sum by (route) (rate(llm_gateway_requests_total{verdict="hard_fail"}[1m]))
scoring:
  penalties:
    - {signal: hard_fail_ratio, above: 0, points_per_unit: 100, max: 100}
`

// Policy parses src as a Hermes configuration and builds its policy,
// failing t if either fails.
func Policy(t testing.TB, src string) *evaluator.Policy {
	t.Helper()
	cfg, err := config.Parse([]byte(src), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := evaluator.NewPolicy(cfg.Rules())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// DefaultPolicy is the shipped policy (rules/hermes.yaml), changed by each
// non-nil edit, validated.
func DefaultPolicy(t testing.TB, edits ...func(*config.Config)) *evaluator.Policy {
	t.Helper()
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, edit := range edits {
		if edit != nil {
			edit(cfg)
		}
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	p, err := evaluator.NewPolicy(cfg.Rules())
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// LongWindows is an edit for DefaultPolicy: hard_fail_ratio and
// soft_fail_ratio also counted over 5m and 15m, so that contributions
// carry the longer window that gave their evidence. (evaluator's own
// windowedPolicy repeats it: its tests cannot import this package.)
func LongWindows(c *config.Config) {
	for i := range c.Signals {
		if s := &c.Signals[i]; s.Name == "hard_fail_ratio" || s.Name == "soft_fail_ratio" {
			s.Windows = []time.Duration{5 * time.Minute, 15 * time.Minute}
		}
	}
}

// HealthyValues are values of the shipped signals that cost no points and
// fire no alert.
var HealthyValues = map[string]float64{
	"soft_fail_ratio": 0.02, "hard_fail_ratio": 0.0002, "empty_ratio": 0, "error_body_ratio": 0,
	"status_422_ratio": 0.002, "retry_ratio": 0.01, "p99_ratio": 1, "p95_ratio": 1, "throughput_ratio": 1,
	"quota_remaining": 0.8, "quota_forecast": 0.7, "probe_success": 1, "probe_e2e_success": 1, "quality_score": 0.95,
	"response_size_ratio": 1,
}

// Healthy is a snapshot at at where every signal of every route of p has
// its HealthyValues value (0 for signals it does not know).
func Healthy(p *evaluator.Policy, at time.Time) evaluator.Snapshot {
	names := make([]string, len(p.Config.Signals))
	for j, sig := range p.Config.Signals {
		names[j] = sig.Name
	}
	s := evaluator.NewSnapshot(at, p.Routes(), names)
	for i := range p.Routes() {
		for j, sig := range p.Config.Signals {
			s.SetCell(i, j, evaluator.Sample{Value: HealthyValues[sig.Name]})
		}
	}
	return s
}

// CandidateFile writes a candidate policy for `backtest --compare` to a
// temporary file and returns its path: the shipped policy with warm and
// shed quicker to move (dwell 15 s, shed below 80), as an operator would
// edit a copy of rules/hermes.yaml.
func CandidateFile(t testing.TB) string {
	t.Helper()
	src := string(rules.DefaultYAML)
	for old, repl := range map[string]string{
		"{name: warm, below: 85, recover_above: 90, dwell: 1m,": "{name: warm, below: 85, recover_above: 90, dwell: 15s,",
		"{name: shed, below: 75, recover_above: 82, dwell: 1m,": "{name: shed, below: 80, recover_above: 84, dwell: 15s,",
	} {
		if !strings.Contains(src, old) {
			t.Fatalf("rules/hermes.yaml no longer holds %q: update testenv.CandidateFile", old)
		}
		src = strings.Replace(src, old, repl, 1)
	}
	path := filepath.Join(t.TempDir(), "candidate.yaml")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}
