package auditlog

import (
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hermes-failover/hermes/internal/testenv"
)

// failingWriter fails while broken.
type failingWriter struct {
	broken bool
	buf    strings.Builder
}

func (w *failingWriter) Write(p []byte) (int, error) {
	if w.broken {
		return 0, errors.New("no space left on device")
	}
	return w.buf.Write(p)
}

// TestAuditLogSurvivesAFailedWrite: a failed write (a full disk) is
// counted, and the records after it are written once the disk has room
// again (a json.Encoder keeps its first error for ever).
func TestAuditLogSurvivesAFailedWrite(t *testing.T) {
	w := &failingWriter{broken: true}
	reg := prometheus.NewRegistry()
	a := New(w)
	a.Register(reg, slog.New(slog.DiscardHandler))
	a.Write(Record{Type: "lost"})
	w.broken = false
	a.Write(Record{Type: "kept"})
	if got := w.buf.String(); !strings.Contains(got, `"type":"kept"`) {
		t.Errorf("after the disk had room again the log holds %q", got)
	}
	if v := testenv.Metric(t, reg, "hermes_audit_write_errors_total", nil); v != 1 {
		t.Errorf("hermes_audit_write_errors_total = %v, want 1", v)
	}
}

// TestAuditLogReopens: after logrotate's `create` (the file moved away and
// a new one created) Reopen makes the records go to the new file; and a
// file deleted under Hermes is recreated after a failed write.
func TestAuditLogReopens(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "audit.jsonl")
	a, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	a.Write(Record{Type: "before"})
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := a.Reopen(); err != nil {
		t.Fatal(err)
	}
	a.Write(Record{Type: "after"})
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), `"type":"after"`) {
		t.Errorf("after the rotation the new file holds %q", b)
	}
	if b, _ := os.ReadFile(path + ".1"); strings.Contains(string(b), `"type":"after"`) {
		t.Errorf("a record went to the rotated file: %q", b)
	}
}

// brokenWriter fails while broken.
type brokenWriter struct{ broken bool }

func (w *brokenWriter) Write(p []byte) (int, error) {
	if w.broken {
		return 0, syscall.ENOSPC
	}
	return len(p), nil
}

// dropTime leaves the time out of log lines.
func dropTime(_ []string, a slog.Attr) slog.Attr {
	if a.Key == slog.TimeKey {
		return slog.Attr{}
	}
	return a
}

// TestAuditWriteFailureLoggedOnce: records that cannot be written are one
// line at the first, counted each, and one line when a record is written
// again, with how many were lost.
func TestAuditWriteFailureLoggedOnce(t *testing.T) {
	var logs testenv.Buffer
	w := &brokenWriter{broken: true}
	a := New(w)
	reg := prometheus.NewRegistry()
	a.Register(reg, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: dropTime})))
	for range 1000 {
		a.Write(Record{Type: "actuation"})
	}
	w.broken = false
	a.Write(Record{Type: "actuation"})
	a.Write(Record{Type: "actuation"})
	want := `level=ERROR msg="cannot write the audit log; records are lost until a write succeeds (counted in hermes_audit_write_errors_total)" file="" err="no space left on device"
level=INFO msg="the audit log is written again" file="" lost=1000`
	if got := strings.TrimSpace(logs.String()); got != want {
		t.Errorf("logged\n%s\nwant\n%s", got, want)
	}
	if n := testutil.ToFloat64(a.errs); n != 1000 {
		t.Errorf("hermes_audit_write_errors_total %v, want 1000", n)
	}
}
