package runner

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/atomicfile"
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
