package unleash

import (
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/hermes-failover/hermes/actuators"
)

// Defaults of the keys of a `type: unleash` actuator.
const (
	DefaultProject     = "default"
	DefaultEnvironment = "development"
	DefaultTimeout     = 10 * time.Second
)

// maxNameLen is the longest flag or variant name Unleash accepts.
const maxNameLen = 100

// Config holds the keys of a `type: unleash` actuator.
type Config struct {
	// URL is Unleash's base URL (without /api).
	URL string `mapstructure:"url"`
	// AdminToken is an admin API token; prefer AdminTokenFile.
	AdminToken string `mapstructure:"admin_token"`
	// AdminTokenFile holds the admin API token; it is re-read on every
	// Apply and Current, so a rotated token is picked up.
	AdminTokenFile string `mapstructure:"admin_token_file"`
	// Project holds the flags (default "default").
	Project string `mapstructure:"project"`
	// Environment is the environment whose flags are set (default "development").
	Environment string `mapstructure:"environment"`
	// Timeout bounds each request to Unleash (default 10s).
	Timeout time.Duration `mapstructure:"timeout"`
	// Flags names the flags of each service. A service without an entry
	// uses the routes flag hermes-<service>-route and no toggles.
	Flags map[string]Flags `mapstructure:"flags"`
}

// Flags names the flags of one service.
type Flags struct {
	// Routes is the flag whose strategy variants are the routes (default
	// hermes-<service>-route). Hermes owns its strategies in the environment.
	Routes string `mapstructure:"routes_flag"`
	// DegradedMode, when set, is switched on while the service is degraded.
	DegradedMode string `mapstructure:"degraded_mode_flag"`
	// RetriesEnabled, when set, is switched on while retries are allowed.
	RetriesEnabled string `mapstructure:"retries_enabled_flag"`
}

// DefaultRoutesFlag is the routes flag of a service without routes_flag.
func DefaultRoutesFlag(service string) string { return "hermes-" + service + "-route" }

// ParseConfig decodes the type-specific keys strictly, applies the
// defaults, adds an entry to Flags for each of services (the actuator's
// `services:`) and validates the result.
func ParseConfig(opts map[string]any, services ...string) (Config, error) {
	c := Config{Project: DefaultProject, Environment: DefaultEnvironment, Timeout: DefaultTimeout}
	if err := actuators.DecodeOptions(opts, &c); err != nil {
		return Config{}, err
	}
	c.URL = strings.TrimRight(strings.TrimSpace(c.URL), "/")
	var errs []error
	if len(services) > 0 {
		for _, s := range slices.Sorted(maps.Keys(c.Flags)) {
			if !slices.Contains(services, s) {
				errs = append(errs, fmt.Errorf("flags[%s]: %q is not one of the actuator's services (%s)", s, s, strings.Join(services, ", ")))
			}
		}
	}
	for _, s := range services {
		if _, ok := c.Flags[s]; !ok {
			if c.Flags == nil {
				c.Flags = map[string]Flags{}
			}
			c.Flags[s] = Flags{}
		}
	}
	for s, f := range c.Flags {
		if f.Routes == "" {
			f.Routes = DefaultRoutesFlag(s)
			c.Flags[s] = f
		}
	}
	if err := c.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, err
	}
	return c, nil
}

// Validate reports every problem of c, each with its key. It never
// mentions the token itself.
func (c Config) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	if c.URL == "" {
		add("url must be set")
	} else if u, err := url.Parse(c.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		add("url: %q is not an http(s) URL", redactURL(c.URL))
	} else if u.User != nil {
		add("url: must not hold credentials (use admin_token_file)")
	}
	switch {
	case c.AdminToken == "" && c.AdminTokenFile == "":
		add("admin_token or admin_token_file must be set")
	case c.AdminToken != "" && c.AdminTokenFile != "":
		add("admin_token and admin_token_file are mutually exclusive")
	}
	if c.Project == "" {
		add("project must not be empty")
	}
	if c.Environment == "" {
		add("environment must not be empty")
	}
	if c.Timeout <= 0 {
		add("timeout must be positive")
	}
	owner := map[string]string{} // flag → "flags.<service>.<key>"
	for _, s := range slices.Sorted(maps.Keys(c.Flags)) {
		f := c.Flags[s]
		for _, k := range []struct{ key, name string }{
			{"routes_flag", f.Routes},
			{"degraded_mode_flag", f.DegradedMode},
			{"retries_enabled_flag", f.RetriesEnabled},
		} {
			path := "flags[" + s + "]." + k.key
			if k.name == "" {
				if k.key == "routes_flag" {
					add("%s must be set", path)
				}
				continue
			}
			if err := checkName(k.name); err != nil {
				add("%s: %w", path, err)
				continue
			}
			if prev, dup := owner[k.name]; dup {
				add("%s: flag %q is also %s", path, k.name, prev)
				continue
			}
			owner[k.name] = path
		}
	}
	return errors.Join(errs...)
}

// checkName reports whether Unleash accepts name as a flag or variant
// name: 1 to 100 URL-friendly characters (those encodeURIComponent keeps).
func checkName(name string) error {
	if name == "" || len(name) > maxNameLen {
		return fmt.Errorf("%q must be 1 to %d characters long", name, maxNameLen)
	}
	for _, r := range name {
		if !urlFriendly(r) {
			return fmt.Errorf("%q holds %q; Unleash names may only hold letters, digits and - _ . ! ~ * ' ( )", name, r)
		}
	}
	return nil
}

func urlFriendly(r rune) bool {
	switch {
	case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9':
		return true
	}
	return strings.ContainsRune("-_.!~*'()", r)
}

// token returns the admin token, reading admin_token_file if it is set.
// Its errors name the file, never its content.
func (c Config) token() (string, error) {
	if c.AdminTokenFile == "" {
		return c.AdminToken, nil
	}
	data, err := os.ReadFile(c.AdminTokenFile)
	if err != nil {
		return "", fmt.Errorf("admin_token_file: %w", err) // *fs.PathError: op, path, errno
	}
	tok := strings.TrimSpace(string(data))
	if tok == "" {
		return "", fmt.Errorf("admin_token_file: %s is empty", c.AdminTokenFile)
	}
	return tok, nil
}

// redactURL hides a password in a URL that failed to parse as expected.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil {
		return u.Redacted()
	}
	return "<unparsable>"
}
