package nginx

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/hermes-failover/hermes/actuators"
)

var (
	_ actuators.Targeter    = (*Actuator)(nil)
	_ actuators.Preflighter = (*Actuator)(nil)
	_ actuators.Initializer = (*Actuator)(nil)
)

// Targets are the include files of the services it handles, absolute: no
// other actuator may write them.
func (a *Actuator) Targets() []string {
	var out []string
	for _, svc := range a.handled {
		p := a.IncludePath(svc)
		if abs, err := filepath.Abs(p); err == nil {
			p = abs
		}
		out = append(out, filepath.Clean(p))
	}
	return out
}

// Preflight reports what nginx and its files need on this machine: the
// nginx binary, the include files' directories, and config_file and prefix
// when set.
func (a *Actuator) Preflight() error {
	var errs []error
	if _, err := exec.LookPath(a.cfg.NginxBinary); err != nil {
		errs = append(errs, fmt.Errorf("nginx_binary: %w", err))
	}
	dirs := map[string]bool{}
	for _, svc := range a.handled {
		p := a.IncludePath(svc)
		if dirs[filepath.Dir(p)] {
			continue
		}
		dirs[filepath.Dir(p)] = true
		if err := actuators.CheckDir("include_path", p); err != nil {
			errs = append(errs, err)
		}
	}
	if a.cfg.ConfigFile != "" {
		if _, err := os.Stat(a.cfg.ConfigFile); err != nil {
			errs = append(errs, fmt.Errorf("config_file: %w", err))
		}
	}
	if a.cfg.Prefix != "" {
		if st, err := os.Stat(a.cfg.Prefix); err != nil || !st.IsDir() {
			errs = append(errs, fmt.Errorf("prefix: %s is not a directory", a.cfg.Prefix))
		}
	}
	return errors.Join(errs...)
}
