package runner

import (
	"context"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// WatchConfig reloads the configuration when its file changes. It watches
// the directory, not the file, so editors' and Kubernetes' atomic renames
// are seen too, and waits for changes to settle before reloading.
func (r *Runner) WatchConfig(ctx context.Context) error {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return err
	}
	defer w.Close()
	dir := filepath.Dir(r.opts.ConfigPath)
	if err := w.Add(dir); err != nil {
		return err
	}
	name := filepath.Clean(r.opts.ConfigPath)
	const settle = 500 * time.Millisecond
	var pending <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return nil
		case ev, ok := <-w.Events:
			if !ok {
				return nil
			}
			// Kubernetes ConfigMaps swap a ..data symlink; any change in the
			// directory may change what the config path resolves to.
			if filepath.Clean(ev.Name) == name || filepath.Base(ev.Name) == "..data" {
				pending = time.After(settle)
			}
		case err, ok := <-w.Errors:
			if !ok {
				return nil
			}
			r.log.Warn("config watch", "err", err)
		case <-pending:
			pending = nil
			r.log.Info("configuration file changed; reloading", "file", r.opts.ConfigPath)
			_ = r.Reload(ctx) // rejection is logged and counted by reload
		}
	}
}
