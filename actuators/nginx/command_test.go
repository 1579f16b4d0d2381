package nginx

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/actuators"
)

func TestErrorsSayWhetherToRetry(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "nginx")
	// A fake nginx whose test fails and whose reload hangs.
	os.WriteFile(script, []byte("#!/bin/sh\ncase \"$*\" in *-t*) echo 'nginx: [emerg] broken' >&2; exit 1;; esac\nexec sleep 10\n"), 0o755)
	opts := map[string]any{
		"include_path":    filepath.Join(dir, "chat.conf"),
		"nginx_binary":    script,
		"command_timeout": "200ms",
		"upstreams":       map[string]any{"chat": map[string]any{"free": []any{"127.0.0.1:1"}}},
	}
	d := actuators.Splits{"chat": {Weights: map[string]int{"free": 100}}}
	err := newActuator(t, opts).Apply(context.Background(), d)
	if err == nil || !strings.Contains(err.Error(), "nginx: [emerg] broken") || retryable(err) {
		t.Errorf("failed test: err = %v, retryable %v; want nginx's message, not retryable", err, retryable(err))
	}
	opts["test_args"] = []any{"-v"}
	start := time.Now()
	err = newActuator(t, opts).Apply(context.Background(), d)
	if err == nil || !strings.Contains(err.Error(), "timed out after 200ms") || !retryable(err) {
		t.Errorf("hanging reload: err = %v, retryable %v; want a retryable timeout", err, retryable(err))
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("hanging reload took %v", took)
	}
	if _, err := os.Stat(filepath.Join(dir, "chat.conf")); !os.IsNotExist(err) {
		t.Errorf("include file left behind: %v", err)
	}
}

// retryable looks for a Retryable method, as actuators' Retry does.
func retryable(err error) bool {
	var r interface{ Retryable() bool }
	return errors.As(err, &r) && r.Retryable()
}

// TestTickDeadlineIsNotReportedAsCommandTimeout: when the caller's (the
// tick's) deadline kills nginx before command_timeout, the error says so,
// with the time it really ran, not "timed out after command_timeout".
func TestTickDeadlineIsNotReportedAsCommandTimeout(t *testing.T) {
	dir := t.TempDir()
	script := filepath.Join(dir, "nginx")
	// A fake nginx whose test hangs.
	if err := os.WriteFile(script, []byte("#!/bin/sh\nexec sleep 30\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	opts := map[string]any{
		"include_path":    filepath.Join(dir, "chat.conf"),
		"nginx_binary":    script,
		"command_timeout": "20s",
		"upstreams":       map[string]any{"chat": map[string]any{"free": []any{"127.0.0.1:1"}}},
	}
	d := actuators.Splits{"chat": {Weights: map[string]int{"free": 100}}}
	ctx, cancel := context.WithTimeout(t.Context(), 300*time.Millisecond)
	defer cancel()
	start := time.Now()
	err := newActuator(t, opts).Apply(ctx, d)
	took := time.Since(start)
	if err == nil || !retryable(err) {
		t.Fatalf("nginx -t cut by the deadline: err = %v, retryable %v; want a retryable error", err, retryable(err))
	}
	msg := err.Error()
	if strings.Contains(msg, "timed out after 20s") || !strings.Contains(msg, "cut by the tick's deadline after ") || !strings.Contains(msg, "before command_timeout 20s") {
		t.Fatalf("err = %v; want it cut by the tick's deadline, before command_timeout 20s", err)
	}
	// The time it names is the time nginx ran: within Apply's, far from
	// the configured 20 s.
	after := msg[strings.Index(msg, "deadline after ")+len("deadline after "):]
	ran, perr := time.ParseDuration(after[:strings.Index(after, ",")])
	if perr != nil || ran <= 0 || ran > took {
		t.Errorf("err names %q as the time nginx ran; want a time within Apply's %v", after, took)
	}
}
