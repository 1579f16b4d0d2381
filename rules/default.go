package rules

import _ "embed"

// DefaultYAML is the shipped default policy, rules/hermes.yaml.
//
//go:embed hermes.yaml
var DefaultYAML []byte

// Default parses and validates the shipped default policy. Environment
// overrides (HERMES_…) apply to it as to any file.
func Default() (*Config, error) {
	return Parse(DefaultYAML, "hermes.yaml")
}
