package actuators

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"

	"github.com/hermes-failover/hermes/rules/config"
)

// Targeter is implemented by backends that write files: Targets are their
// absolute paths. Build refuses two actuators with a target in common, as
// they would overwrite each other's state every tick.
type Targeter interface {
	Targets() []string
}

// Preflighter is implemented by backends that can tell, before the first
// tick, whether this machine lets them work whatever the desired state: a
// directory to write in, a binary to run. Each problem starts with the
// option it concerns ("path: …"), so that it is shown at that option's line.
type Preflighter interface {
	Preflight() error
}

// Preflight runs the Preflight of every actuator's backend; acts are what
// Build returned, in configuration order. Problems are reported like
// Build's, with their place in the configuration.
func Preflight(acts []Actuator) error {
	var errs []error
	for i, a := range acts {
		p, ok := Backend(a).(Preflighter)
		if !ok {
			continue
		}
		if err := p.Preflight(); err != nil {
			for _, e := range flatten(err) {
				errs = append(errs, problemAt(i, a.Name(), e))
			}
		}
	}
	return errors.Join(errs...)
}

// Initializer is implemented by backends whose consumer cannot start
// before the backend holds a state (nginx: its configuration names the
// upstreams the include files define). WriteInitial writes desired for
// the services that hold nothing yet, never changing what exists, and
// returns what it wrote.
type Initializer interface {
	WriteInitial(desired Splits) ([]string, error)
}

// WriteInitial runs the WriteInitial of every actuator's backend that has
// one and returns what each wrote, as "name: what". Problems are reported
// like Build's, with their place in the configuration.
func WriteInitial(acts []Actuator, desired Splits) ([]string, error) {
	var out []string
	var errs []error
	for i, a := range acts {
		w, ok := Backend(a).(Initializer)
		if !ok {
			continue
		}
		wrote, err := w.WriteInitial(desired)
		for _, x := range wrote {
			out = append(out, a.Name()+": "+x)
		}
		if err != nil {
			errs = append(errs, problemAt(i, a.Name(), err))
		}
	}
	return out, errors.Join(errs...)
}

// checkTargets reports actuators writing a target an earlier one writes.
func checkTargets(acts []Actuator) error {
	var errs []error
	owner := map[string]int{}
	for i, a := range acts {
		t, ok := Backend(a).(Targeter)
		if !ok {
			continue
		}
		for _, target := range t.Targets() {
			if j, dup := owner[target]; dup {
				errs = append(errs, problemAt(i, a.Name(), fmt.Errorf("writes %s, as actuators[%d] (%s) does: they would overwrite each other", target, j, acts[j].Name())))
				continue
			}
			owner[target] = i
		}
	}
	return errors.Join(errs...)
}

// optionKeyRE is the option a backend's message starts with ("path: …").
var optionKeyRE = regexp.MustCompile(`^([a-z_]+)[:.\[ ]`)

// problemAt places err at the i-th actuator, or at its option the message
// starts with, for config.Config.Locate to find its line.
func problemAt(i int, name string, err error) error {
	where := fmt.Sprintf("actuators[%d]", i)
	path := where
	if name != "" {
		where += " (" + name + ")"
	}
	if m := optionKeyRE.FindStringSubmatch(err.Error()); m != nil {
		path += "." + m[1]
	}
	return config.ProblemAt(path, where+": "+err.Error())
}

// CheckDir reports a problem when the directory a file is to be written in
// does not exist or is not a directory; backends' Preflight use it. key is
// the option naming the file.
func CheckDir(key, file string) error {
	dir := filepath.Dir(file)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("%s: directory %s does not exist", key, dir)
	case err != nil:
		return fmt.Errorf("%s: %w", key, err)
	case !st.IsDir():
		return fmt.Errorf("%s: %s is not a directory", key, dir)
	}
	return nil
}
