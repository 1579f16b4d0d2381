// Package atomicfile replaces files atomically, so that readers (nginx, a
// gateway reading the split file, Hermes after a crash) never see half a
// file. It is a thin layer over github.com/google/renameio.
package atomicfile

import (
	"os"

	"github.com/google/renameio/v2"
)

// Write replaces path with data and exactly the given permissions: it
// writes a temporary file in the same directory, fsyncs it and renames it
// over path. (renameio.WriteFile would keep an existing file's permissions.)
func Write(path string, data []byte, mode os.FileMode) error {
	f, err := renameio.NewPendingFile(path, renameio.WithStaticPermissions(mode))
	if err != nil {
		return err
	}
	defer f.Cleanup() //nolint:errcheck // removes the temporary file on failure; a no-op after success
	if _, err := f.Write(data); err != nil {
		return err
	}
	return f.CloseAtomicallyReplace()
}
