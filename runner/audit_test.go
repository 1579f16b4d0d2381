package runner

import (
	"bytes"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// TestAuditLogPrintsValues: log lines of events print the values of the
// event's optional fields, never pointers or <nil>.
func TestAuditLogPrintsValues(t *testing.T) {
	var logs, audit bytes.Buffer
	r := &auditStage{log: slog.New(slog.NewTextHandler(&logs, nil)), audit: NewAuditLog(&audit)}
	score, stage, percent := 42.5, 2, 50
	expires := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	r.event(evaluator.Event{Type: evaluator.EventLevel, Service: "chat", Route: "free", From: "warm", To: "shed", Score: &score})
	r.event(evaluator.Event{Type: evaluator.EventFailback, Service: "chat", Route: "free", Stage: &stage, Percent: &percent, Score: &score})
	r.event(evaluator.Event{Type: evaluator.EventOverride, State: "set", Name: "pin", Service: "chat", Route: "paid", Expires: &expires})
	out := logs.String()
	for _, want := range []string{"score=42.5", "stage=2", "percent=50", "expires=2026-12-01T03:00:00.000Z"} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %q:\n%s", want, out)
		}
	}
	for _, bad := range []string{"0x", "<nil>"} {
		if strings.Contains(out, bad) {
			t.Errorf("log prints %q:\n%s", bad, out)
		}
	}
	if strings.Count(audit.String(), "\n") != 3 {
		t.Errorf("audit log:\n%s", audit.String())
	}
}

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
	a := NewAuditLog(w)
	a.register(reg, slog.New(slog.DiscardHandler))
	a.Write(auditRecord{Type: "lost"})
	w.broken = false
	a.Write(auditRecord{Type: "kept"})
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
	a, err := OpenAuditLog(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	a.Write(auditRecord{Type: "before"})
	if err := os.Rename(path, path+".1"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := a.Reopen(); err != nil {
		t.Fatal(err)
	}
	a.Write(auditRecord{Type: "after"})
	if b, _ := os.ReadFile(path); !strings.Contains(string(b), `"type":"after"`) {
		t.Errorf("after the rotation the new file holds %q", b)
	}
	if b, _ := os.ReadFile(path + ".1"); strings.Contains(string(b), `"type":"after"`) {
		t.Errorf("a record went to the rotated file: %q", b)
	}
}
