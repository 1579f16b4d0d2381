package nginx

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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
		if err := writeAtomic(f.path, f.data, mode); err != nil {
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
			err = writeAtomic(p.path, p.data, p.mode)
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

// writeAtomic replaces path with data: it writes a temporary file in the
// same directory (named so that an `include *.conf` never matches it),
// syncs it, renames it over path and syncs the directory.
func writeAtomic(path string, data []byte, mode fs.FileMode) (err error) {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = tmp.Write(data); err != nil {
		return err
	}
	if err = tmp.Chmod(mode); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return err
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err = d.Sync(); err != nil {
		return fmt.Errorf("syncing directory %s: %w", dir, err)
	}
	return nil
}
