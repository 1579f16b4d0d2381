package nginx

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/hermes-failover/hermes/actuators"
)

// Defaults of the optional keys.
const (
	DefaultUpstreamName   = "hermes_{service}"
	DefaultNginxBinary    = "nginx"
	DefaultMode           = os.FileMode(0o644)
	DefaultCommandTimeout = 10 * time.Second
)

// servicePlaceholder stands for the service name in include_path and
// upstream_name.
const servicePlaceholder = "{service}"

// DefaultTestArgs and DefaultReloadArgs are the nginx arguments that test
// the configuration and reload it, unless test_args / reload_args are set.
var (
	DefaultTestArgs   = []string{"-t"}
	DefaultReloadArgs = []string{"-s", "reload"}
)

// Config holds the keys of a `type: nginx` actuator:
//
//	actuators:
//	  - type: nginx
//	    services: [chat]                      # default: the services of upstreams
//	    include_path: /etc/nginx/hermes/{service}.conf
//	    upstream_name: hermes_{service}       # default
//	    upstreams:
//	      chat:
//	        free: [127.0.0.1:8001]
//	        paid: ["127.0.0.1:8002 max_fails=3 fail_timeout=10s"]
//	    nginx_binary: /usr/sbin/nginx         # default: nginx, looked up in PATH
//	    config_file: /etc/nginx/nginx.conf    # optional: -c FILE
//	    prefix: /etc/nginx                    # optional: -p DIR
//	    test_args: [-t]                       # default
//	    reload_args: [-s, reload]             # default
//	    # pid_file: /run/nginx.pid            # instead of reload_args: SIGHUP the master
//	    command_timeout: 10s                  # default, for each nginx command
//	    mode: 0644                            # default
//	    state_listen: 127.0.0.1:9145          # optional: nginx serves its state here
//
// Every service gets one file, include_path with {service} replaced, holding
// one upstream block named upstream_name with {service} replaced; nginx's
// http block must include those files (include /etc/nginx/hermes/*.conf;)
// and proxy_pass to the upstream names. Both keys must contain {service}
// when upstreams lists more than one service.
//
// Upstreams lists, per service and route, the route's nginx server entries:
// an address (host:port or unix:/path) optionally followed by server
// parameters (max_fails=, fail_timeout=, max_conns=, ...). Hermes sets
// weight= and down itself, so those (and backup) are refused. Since keys
// reach the actuator lower-cased, service and route names are matched to
// the desired state case-insensitively when they do not match exactly.
//
// With state_listen, every include file also holds a small server block
// on that address that answers the file's state line: what the running
// nginx workers loaded, which Current reads and Apply compares (see
// state.go). Without it Hermes sees only the files.
//
// config_file and prefix are passed (as -c FILE and -p DIR) before both
// test_args and reload_args. With pid_file, Hermes reloads nginx by
// sending SIGHUP to the PID in that file instead of running reload_args.
type Config struct {
	IncludePath    string                         `mapstructure:"include_path"`
	UpstreamName   string                         `mapstructure:"upstream_name"`
	Upstreams      map[string]map[string][]string `mapstructure:"upstreams"`
	NginxBinary    string                         `mapstructure:"nginx_binary"`
	ConfigFile     string                         `mapstructure:"config_file"`
	Prefix         string                         `mapstructure:"prefix"`
	TestArgs       []string                       `mapstructure:"test_args"`
	ReloadArgs     []string                       `mapstructure:"reload_args"`
	PIDFile        string                         `mapstructure:"pid_file"`
	CommandTimeout time.Duration                  `mapstructure:"command_timeout"`
	Mode           os.FileMode                    `mapstructure:"mode"`
	StateListen    string                         `mapstructure:"state_listen"`
}

// ParseConfig decodes the type-specific keys strictly, applies the
// defaults and validates the result.
func ParseConfig(opts map[string]any) (Config, error) {
	c := Config{
		UpstreamName:   DefaultUpstreamName,
		NginxBinary:    DefaultNginxBinary,
		CommandTimeout: DefaultCommandTimeout,
		Mode:           DefaultMode,
	}
	if err := actuators.DecodeOptions(opts, &c); err != nil {
		return Config{}, err
	}
	var errs []error
	if c.TestArgs == nil {
		c.TestArgs = slices.Clone(DefaultTestArgs)
	}
	switch {
	case c.PIDFile != "" && c.ReloadArgs != nil:
		errs = append(errs, errors.New("reload_args and pid_file: set one, not both"))
	case c.PIDFile == "" && c.ReloadArgs == nil:
		c.ReloadArgs = slices.Clone(DefaultReloadArgs)
	}
	if err := c.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := errors.Join(errs...); err != nil {
		return Config{}, err
	}
	return c, nil
}

var (
	// upstreamNameRE is what an upstream name may hold: no space, no
	// nginx syntax, no ':' (proxy_pass would read a port).
	upstreamNameRE = regexp.MustCompile(`^[A-Za-z0-9_.-]+$`)
	// routeNameRE is rules' pattern for route names; they end up in
	// comments of the include file.
	routeNameRE = regexp.MustCompile(`^[a-zA-Z0-9_.:-]+$`)
	// forbiddenServerChars would end the server directive or start a
	// block, a comment, a quoted string or a variable.
	forbiddenServerChars = ";{}#'\"\\$"
)

// Validate reports every problem of c, each naming its key.
func (c Config) Validate() error {
	var errs []error
	add := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	multi := len(c.Upstreams) > 1

	switch {
	case c.IncludePath == "":
		add("include_path must be set (e.g. /etc/nginx/hermes/{service}.conf)")
	case !filepath.IsAbs(c.IncludePath):
		add("include_path: %q must be an absolute path", c.IncludePath)
	case multi && !strings.Contains(c.IncludePath, servicePlaceholder):
		add("include_path: must contain %s when upstreams lists several services", servicePlaceholder)
	}
	switch {
	case c.UpstreamName == "":
		add("upstream_name must not be empty (default %s)", DefaultUpstreamName)
	case multi && !strings.Contains(c.UpstreamName, servicePlaceholder):
		add("upstream_name: must contain %s when upstreams lists several services", servicePlaceholder)
	}

	if c.StateListen != "" {
		if _, port, err := net.SplitHostPort(c.StateListen); err != nil || port == "" || port == "0" {
			add("state_listen: %q must be host:port (e.g. 127.0.0.1:9145)", c.StateListen)
		}
	}
	if len(c.Upstreams) == 0 {
		add("upstreams: must list at least one service")
	}
	for _, svc := range sortedKeys(c.Upstreams) {
		where := "upstreams." + svc
		if c.UpstreamName != "" {
			if name := expand(c.UpstreamName, svc); !upstreamNameRE.MatchString(name) {
				add("%s: upstream name %q must match %s", where, name, upstreamNameRE)
			}
		}
		if svc == "" || svc == "." || svc == ".." || strings.ContainsAny(svc, "/\x00") {
			add("%s: service name %q cannot be part of a file name", where, svc)
		}
		routes := c.Upstreams[svc]
		if len(routes) == 0 {
			add("%s: must list at least one route", where)
		}
		for _, route := range sortedKeys(routes) {
			rw := where + "." + route
			if !routeNameRE.MatchString(route) {
				add("%s: route name %q must match %s", where, route, routeNameRE)
			}
			if len(routes[route]) == 0 {
				add("%s: must list at least one server", rw)
			}
			for i, entry := range routes[route] {
				if err := checkServer(entry); err != nil {
					add("%s[%d]: %v", rw, i, err)
				}
			}
		}
		for other := range c.Upstreams {
			if other != svc && strings.EqualFold(other, svc) && other < svc {
				add("%s: same service as upstreams.%s (names are matched case-insensitively)", where, other)
			}
		}
	}

	if c.NginxBinary == "" {
		add("nginx_binary must not be empty (default %s)", DefaultNginxBinary)
	}
	if len(c.TestArgs) == 0 {
		add("test_args must not be empty (default %q)", DefaultTestArgs)
	}
	if c.PIDFile == "" && len(c.ReloadArgs) == 0 {
		add("reload_args must not be empty (default %q), or set pid_file", DefaultReloadArgs)
	}
	if c.CommandTimeout <= 0 {
		add("command_timeout: must be positive, got %v", c.CommandTimeout)
	}
	if c.Mode&^os.ModePerm != 0 {
		add("mode: %#o is not a permission (want 0000..0777; write 0644 unquoted or \"0644\")", uint32(c.Mode))
	}
	return errors.Join(errs...)
}

// checkServer checks one server entry: an address and parameters Hermes
// does not own.
func checkServer(entry string) error {
	if i := strings.IndexAny(entry, forbiddenServerChars); i >= 0 {
		return fmt.Errorf("%q: %q is not allowed in a server entry", entry, entry[i:i+1])
	}
	fields := strings.Fields(entry)
	if len(fields) == 0 {
		return errors.New("must not be empty (want host:port [parameters])")
	}
	if strings.Contains(fields[0], "=") {
		return fmt.Errorf("%q must start with an address (host:port or unix:/path)", entry)
	}
	for _, p := range fields[1:] {
		name, _, _ := strings.Cut(p, "=")
		switch name {
		case "weight", "down":
			return fmt.Errorf("%q: %s is set by hermes from the route's share", entry, name)
		case "backup":
			return fmt.Errorf("%q: backup servers would take traffic outside the route split", entry)
		}
	}
	return nil
}

// expand replaces {service} in template.
func expand(template, service string) string {
	return strings.ReplaceAll(template, servicePlaceholder, service)
}
