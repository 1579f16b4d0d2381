// Package evaluatortest has the helpers that tests of the packages around
// the core share: the shipped policy and a healthy snapshot of it.
package evaluatortest

import (
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/rules"
)

// DefaultPolicy is the shipped policy (rules/hermes.yaml), validated.
func DefaultPolicy(t testing.TB) *evaluator.Policy {
	t.Helper()
	return Policy(t, nil)
}

// Policy is the shipped policy changed by edit (when not nil), validated.
func Policy(t testing.TB, edit func(*rules.Config)) *evaluator.Policy {
	t.Helper()
	cfg, err := rules.Default()
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		edit(cfg)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	p, err := evaluator.NewPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// HealthyValues are values of the shipped signals that cost no points.
var HealthyValues = map[string]float64{
	"soft_fail_ratio": 0.02, "hard_fail_ratio": 0.0002, "empty_ratio": 0, "error_body_ratio": 0,
	"status_422_ratio": 0.002, "retry_ratio": 0.01, "p99_ratio": 1, "p95_ratio": 1, "throughput_ratio": 1,
	"quota_remaining": 0.8, "quota_forecast": 0.7, "probe_success": 1, "quality_score": 0.95,
}

// Healthy is a snapshot at t where every signal of every route of p has its
// HealthyValues value (0 for signals it does not know).
func Healthy(p *evaluator.Policy, t time.Time) evaluator.Snapshot {
	s := evaluator.Snapshot{Time: t}
	for _, r := range p.Routes() {
		for _, sig := range p.Config.Signals {
			s.Set(r, sig.Name, evaluator.Sample{Value: HealthyValues[sig.Name]})
		}
	}
	return s
}
