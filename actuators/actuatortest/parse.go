package actuatortest

import (
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/hermes-failover/hermes/rules/config"
)

// ParseCase is one row of a backend's config-parse table: options in, and
// either the configuration they give or the problems they have.
type ParseCase[C any] struct {
	Name string
	Opts map[string]any
	// Services are the actuator's services, for parsers that check the
	// options against them (see ParseServiceCases).
	Services []string
	// Want is the configuration expected when Errs is empty, compared with
	// reflect.DeepEqual unless Check is set.
	Want C
	// Check, when set, checks the configuration instead of Want.
	Check func(t *testing.T, got C)
	// Errs are substrings the error must hold; empty means no error.
	Errs []string
}

// ErrCheck is a further check of every error a table expects; want are
// the case's Errs.
type ErrCheck func(t *testing.T, err error, want []string)

// NoSecrets checks that no error holds any of secrets.
func NoSecrets(secrets ...string) ErrCheck {
	return func(t *testing.T, err error, _ []string) {
		t.Helper()
		for _, s := range secrets {
			if s != "" && strings.Contains(err.Error(), s) {
				t.Errorf("error reveals a secret (%q): %v", s, err)
			}
		}
	}
}

// OneLinePerProblem checks that the error holds exactly one line per
// expected problem: no problem is reported twice, none is unexpected.
func OneLinePerProblem(t *testing.T, err error, want []string) {
	t.Helper()
	if n := len(strings.Split(err.Error(), "\n")); n != len(want) {
		t.Errorf("got %d problems, want %d:\n%v", n, len(want), err)
	}
}

// ParseCases runs a config-parse table as subtests: parse gets each case's
// options; the cases must not set Services.
func ParseCases[C any](t *testing.T, parse func(map[string]any) (C, error), cases []ParseCase[C], checks ...ErrCheck) {
	t.Helper()
	ParseServiceCases(t, func(opts map[string]any, services ...string) (C, error) {
		if len(services) > 0 {
			t.Fatalf("actuatortest: case with services %q, but the parser takes none", services)
		}
		return parse(opts)
	}, cases, checks...)
}

// ParseServiceCases is ParseCases for a parser that also gets the case's
// Services.
func ParseServiceCases[C any](t *testing.T, parse func(map[string]any, ...string) (C, error), cases []ParseCase[C], checks ...ErrCheck) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.Name, func(t *testing.T) {
			got, err := parse(tc.Opts, tc.Services...)
			if len(tc.Errs) == 0 {
				switch {
				case err != nil:
					t.Fatalf("parse: %v", err)
				case tc.Check != nil:
					tc.Check(t, got)
				case !reflect.DeepEqual(got, tc.Want):
					t.Fatalf("parse = %+v, want %+v", got, tc.Want)
				}
				return
			}
			if err == nil {
				t.Fatalf("parse = %+v, want errors %q", got, tc.Errs)
			}
			for _, e := range tc.Errs {
				if !strings.Contains(err.Error(), e) {
					t.Errorf("error\n%v\ndoes not contain %q", err, e)
				}
			}
			for _, check := range checks {
				check(t, err, tc.Errs)
			}
		})
	}
}

// ParseActuators parses the minimal good configuration of the repository
// (testdata/config/minimal.good.yaml) followed by yaml, which holds an
// `actuators:` list, as the binary does, and returns its actuators.
func ParseActuators(t *testing.T, yaml string) []config.ActuatorConfig {
	t.Helper()
	_, here, _, ok := runtime.Caller(0)
	if !ok {
		t.Fatal("actuatortest: cannot locate the repository")
	}
	base, err := os.ReadFile(filepath.Join(filepath.Dir(here), "..", "..", "testdata", "config", "minimal.good.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Parse(append(base, yaml...), "hermes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Actuators
}
