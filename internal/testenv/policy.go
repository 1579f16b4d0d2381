package testenv

import (
	"testing"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/rules"
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
	cfg, err := rules.Parse([]byte(src), "test.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := evaluator.NewPolicy(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
