package config

import "github.com/hermes-failover/hermes/rules"

// Default parses and validates the shipped default policy
// (rules.DefaultYAML). Environment overrides (HERMES_…) apply to it as to
// any file.
func Default() (*Config, error) {
	return Parse(rules.DefaultYAML, "hermes.yaml")
}
