package file

import (
	"errors"
	"fmt"
	"os"

	"github.com/hermes-failover/hermes/actuators"
)

// DefaultMode is the permission of the state file unless `mode` is set.
const DefaultMode os.FileMode = 0o644

// Config holds the keys of a `type: file` actuator.
type Config struct {
	// Path is the state file; it is replaced atomically on every change.
	Path string `mapstructure:"path"`
	// Mode is the state file's permission bits (default 0644).
	Mode os.FileMode `mapstructure:"mode"`
}

// ParseConfig decodes the type-specific keys strictly, applies the
// defaults and validates the result.
func ParseConfig(opts map[string]any) (Config, error) {
	c := Config{Mode: DefaultMode}
	if err := actuators.DecodeOptions(opts, &c); err != nil {
		return Config{}, err
	}
	if err := c.Validate(); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Validate reports every problem of c.
func (c Config) Validate() error {
	var errs []error
	if c.Path == "" {
		errs = append(errs, errors.New("path must be set"))
	}
	if c.Mode&^os.ModePerm != 0 {
		errs = append(errs, fmt.Errorf("mode: %#o is not a permission (want 0000..0777; write 0644 unquoted or \"0644\")", uint32(c.Mode)))
	}
	return errors.Join(errs...)
}
