package config

import (
	"strings"
	"testing"
	"time"
)

func TestParseStrict(t *testing.T) {
	type layer struct {
		Interval time.Duration `mapstructure:"interval"`
		N        int           `mapstructure:"n"`
	}
	type cfg struct {
		Defaults layer `mapstructure:"defaults"`
		Targets  []struct {
			Route string `mapstructure:"route"`
			E2E   layer  `mapstructure:"e2e"`
		} `mapstructure:"targets"`
	}
	var c cfg
	err := ParseStrict([]byte("defaults:\n  interval: 5\n  bogus: 1\nfoo: 2\ntargets:\n  - route: a\n    e2e: {interval: 1x, n: 1.5}\n"), "p.yaml", &c, nil)
	want := []string{
		`p.yaml:2: defaults.interval: duration 5 needs a unit`,
		`p.yaml:3: defaults.bogus: unknown key`,
		`p.yaml:4: foo: unknown key`,
		`p.yaml:7: targets[0].e2e.interval: invalid duration "1x"`,
		`p.yaml:7: targets[0].e2e.n: 1.5 is not an integer`,
	}
	for _, w := range want {
		if err == nil || !strings.Contains(err.Error(), w) {
			t.Errorf("missing %q in:\n%v", w, err)
		}
	}
	c = cfg{}
	err = ParseStrict([]byte("targets:\n  - route: a\n    e2e:\n      interval: 1s\n"), "p.yaml", &c, func() error {
		return Problem("targets[0].e2e.interval", "must be at least %s", "5s")
	})
	if err == nil || err.Error() != "p.yaml:4: targets[0].e2e.interval: must be at least 5s" {
		t.Errorf("validate problem: %v", err)
	}
	if c.Targets[0].E2E.Interval != time.Second {
		t.Errorf("decoded %+v", c)
	}
}
