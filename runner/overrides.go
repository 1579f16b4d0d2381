package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/atomicfile"
	"github.com/hermes-failover/hermes/runner/persist"
)

// defaultOverridesPath puts the overrides file next to the config file.
func defaultOverridesPath(configPath string) string {
	return filepath.Join(filepath.Dir(configPath), "hermes-overrides.json")
}

// overridesFile holds what must survive a restart and Prometheus may not
// know yet: the operators' overrides by service, running drills by route
// (a drill ends by itself at its end time, also when that passed while
// Hermes was down), and the active alerts, for a restart before
// Prometheus scraped an alert that just began (persist.SavedAlerts).
type overridesFile struct {
	Overrides map[string]evaluator.Override `json:"overrides"`
	Drills    map[string]evaluator.Drill    `json:"drills,omitempty"`
	Alerts    persist.SavedAlerts           `json:"alerts,omitzero"`
}

// loadOverrides reads the overrides of the overrides file.
func loadOverrides(path string) (map[string]evaluator.Override, error) {
	f, err := readOverridesFile(path)
	return f.Overrides, err
}

// readOverridesFile reads the overrides file; a missing file means none.
func readOverridesFile(path string) (overridesFile, error) {
	f := overridesFile{Overrides: map[string]evaluator.Override{}}
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return f, nil
	}
	if err != nil {
		return f, fmt.Errorf("overrides: %w", err)
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return f, fmt.Errorf("overrides %s: %w", path, err)
	}
	if f.Overrides == nil {
		f.Overrides = map[string]evaluator.Override{}
	}
	return f, nil
}

// saveOverrides writes the overrides, drills and active alerts of s, the
// state of tick, to the overrides file atomically (renameio: temp file,
// fsync, rename), so a crash never leaves half a file.
func saveOverrides(path string, s evaluator.State, tick time.Time) error {
	b, err := json.MarshalIndent(overridesFile{Overrides: s.Overrides, Drills: s.Drills, Alerts: persist.SaveAlerts(s.Alerts, tick)}, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.Write(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("overrides: %w", err)
	}
	return nil
}
