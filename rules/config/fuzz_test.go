package config_test

import (
	"testing"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
)

// FuzzParse feeds the configuration loader arbitrary files (seeds: the
// shipped policy and testdata/fuzz/FuzzParse, made from the config
// fixtures). Nothing may panic, and a configuration that validates must
// build a policy: Validate is the only gate before the live loop.
func FuzzParse(f *testing.F) {
	f.Add(rules.DefaultYAML)
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := config.Parse(data, "fuzz.yaml")
		if err != nil {
			return
		}
		if err := cfg.Validate(); err != nil {
			return
		}
		if _, err := evaluator.NewPolicy(cfg.Rules()); err != nil {
			t.Fatalf("a configuration that validates does not build a policy: %v", err)
		}
	})
}
