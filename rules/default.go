package rules

import _ "embed"

// DefaultYAML is the shipped default policy, rules/hermes.yaml; the
// loader (rules/config) parses it. It is embedded here, in hermes.yaml's
// own folder, because go:embed reads no parent folder.
//
//go:embed hermes.yaml
var DefaultYAML []byte
