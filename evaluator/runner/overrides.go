package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hermes-failover/hermes/internal/atomicfile"

	"github.com/hermes-failover/hermes/evaluator"
)

// defaultOverridesPath puts the overrides file next to the config file.
func defaultOverridesPath(configPath string) string {
	return filepath.Join(filepath.Dir(configPath), "hermes-overrides.json")
}

type overridesFile struct {
	Overrides map[string]evaluator.Override `json:"overrides"`
}

// loadOverrides reads the overrides file; a missing file means none.
func loadOverrides(path string) (map[string]evaluator.Override, error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string]evaluator.Override{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("overrides: %w", err)
	}
	var f overridesFile
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("overrides %s: %w", path, err)
	}
	if f.Overrides == nil {
		f.Overrides = map[string]evaluator.Override{}
	}
	return f.Overrides, nil
}

// saveOverrides writes the overrides file atomically (renameio: temp file,
// fsync, rename), so a crash never leaves half a file.
func saveOverrides(path string, ov map[string]evaluator.Override) error {
	b, err := json.MarshalIndent(overridesFile{Overrides: ov}, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("overrides: %w", err)
	}
	return nil
}

// Release hands a route in manual back to automation.
func (r *Runner) Release(route, reason, by string) error {
	if reason == "" {
		return errors.New("a reason is required")
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.opts.Now()
	next, evs, err := evaluator.Release(r.pol, r.state, route, now, reason+byText(by))
	if err != nil {
		return err
	}
	r.state = next
	for _, e := range evs {
		r.opts.Audit.Write(e)
	}
	r.log.Info("route released from manual", "route", route, "reason", reason, "by", by)
	return nil
}

// SetOverride pins a service to a route or pauses its automation, and keeps
// the override in the overrides file so it survives restarts.
func (r *Runner) SetOverride(service string, o evaluator.Override) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if o.Since.IsZero() {
		o.Since = r.opts.Now()
	}
	next, ev, err := evaluator.SetOverride(r.pol, r.state, service, o)
	if err != nil {
		return err
	}
	if err := saveOverrides(r.opts.OverridesPath, next.Overrides); err != nil {
		return err
	}
	r.state = next
	r.opts.Audit.Write(ev)
	r.log.Info("override set", "service", service, "kind", o.Kind, "route", o.Route, "reason", o.Reason, "by", o.By, "expires", o.Expires)
	return nil
}

// ClearOverride removes a service's override.
func (r *Runner) ClearOverride(service, reason, by string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	next, ev, err := evaluator.ClearOverride(r.state, service, reason+byText(by), r.opts.Now())
	if err != nil {
		return err
	}
	if err := saveOverrides(r.opts.OverridesPath, next.Overrides); err != nil {
		return err
	}
	r.state = next
	r.opts.Audit.Write(ev)
	r.log.Info("override cleared", "service", service, "reason", reason, "by", by)
	return nil
}

func byText(by string) string {
	if by == "" {
		return ""
	}
	return " (by " + by + ")"
}
