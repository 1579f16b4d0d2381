package runner

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/runner/auditlog"
)

// TestAuditLogPrintsValues: log lines of events print the values of the
// event's optional fields, never pointers or <nil>.
func TestAuditLogPrintsValues(t *testing.T) {
	var logs, audit bytes.Buffer
	r := &auditStage{log: slog.New(slog.NewTextHandler(&logs, nil)), audit: auditlog.New(&audit)}
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
