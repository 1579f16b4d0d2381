package browser_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// browse runs a headless Chromium on args (--dump-dom URL, --screenshot=…)
// with a fresh profile and nothing fetched in the background, and returns
// what it printed.
func browse(t *testing.T, chromium string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, chromium, append(base, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("chromium %v: %v\n%s", args, err, stderr.String())
	}
	return string(out)
}

// screenshot saves what Chromium shows of url at size ("W,H") as name in
// $HERMES_SCREENSHOT_DIR, or in a temporary directory when it is unset,
// checks that it holds a picture, and returns its path.
func screenshot(t *testing.T, chromium, name, url, size string) string {
	t.Helper()
	dir := os.Getenv("HERMES_SCREENSHOT_DIR")
	if dir == "" {
		dir = t.TempDir()
	}
	shot := filepath.Join(dir, name)
	browse(t, chromium, "--screenshot="+shot, "--window-size="+size, url)
	fi, err := os.Stat(shot)
	if err != nil || fi.Size() < 10_000 {
		size := int64(0)
		if fi != nil {
			size = fi.Size()
		}
		t.Fatalf("screenshot %s: %v (%d bytes)", shot, err, size)
	}
	t.Logf("screenshot: %s", shot)
	return shot
}
