package nginx

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/hermes-failover/hermes/internal/atomicfile"
)

// wantFile is an include file as Apply wants it.
type wantFile struct {
	path string
	data []byte
}

// previous is an include file as it was before Apply replaced it.
type previous struct {
	path    string
	existed bool
	data    []byte
	mode    fs.FileMode
}

// writeFiles writes the files whose content differs and returns what they
// held before. A file whose content is right but whose mode is not is
// only chmod-ed: nginx does not care. If a write fails, the files already
// written are restored.
func writeFiles(files []wantFile, mode fs.FileMode) ([]previous, error) {
	var changed []previous
	for _, f := range files {
		old, existed, err := readFile(f.path)
		if err != nil {
			return nil, errors.Join(err, restore(changed))
		}
		if existed && bytes.Equal(old, f.data) {
			if fi, err := os.Stat(f.path); err == nil && fi.Mode().Perm() != mode {
				if err := os.Chmod(f.path, mode); err != nil {
					return nil, errors.Join(err, restore(changed))
				}
			}
			continue
		}
		prev := previous{path: f.path, existed: existed, data: old, mode: mode}
		if existed {
			if fi, err := os.Stat(f.path); err == nil {
				prev.mode = fi.Mode().Perm()
			}
		}
		if err := atomicfile.Write(f.path, f.data, mode); err != nil {
			return nil, errors.Join(fmt.Errorf("writing %s: %w", f.path, err), restore(changed))
		}
		changed = append(changed, prev)
	}
	return changed, nil
}

// restore puts files back as they were, or removes those that did not
// exist.
func restore(files []previous) error {
	var errs []error
	for i := len(files) - 1; i >= 0; i-- {
		p := files[i]
		var err error
		if p.existed {
			err = atomicfile.Write(p.path, p.data, p.mode)
		} else if err = os.Remove(p.path); errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("restoring %s: %w", p.path, err))
		}
	}
	return errors.Join(errs...)
}

// readFile reads path; a missing file is (nil, false, nil).
func readFile(path string) ([]byte, bool, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err // *fs.PathError names the path
	}
	return data, true, nil
}
