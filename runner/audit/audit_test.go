package audit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/runner/auditlog"
	"github.com/hermes-failover/hermes/runner/tick"
)

// TestAuditLogPrintsValues: log lines of events print the values of the
// event's optional fields, never pointers or <nil>.
func TestAuditLogPrintsValues(t *testing.T) {
	var logs, audit bytes.Buffer
	r := New(slog.New(slog.NewTextHandler(&logs, nil)), auditlog.New(&audit))
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

// TestAuditStageLogsAFleetOnce: a tick whose events of one type are more
// than burstEvents (every service's first split at a start-up) logs one
// line for them, with the count and the first few; fewer are logged one
// by one; failures of one alert expression are one line whatever the
// targets; the audit log keeps every event.
func TestAuditStageLogsAFleetOnce(t *testing.T) {
	var logs, audit testenv.Buffer
	s := New(slog.New(slog.NewTextHandler(&logs, nil)), auditlog.New(&audit))
	at := time.Date(2026, 12, 6, 5, 0, 0, 0, time.UTC)
	var events []evaluator.Event
	for i := range 1000 {
		events = append(events, evaluator.Event{Time: at, Type: evaluator.EventTraffic, Service: fmt.Sprintf("svc%d", i), Weights: map[string]int{"a": 100}})
		events = append(events, evaluator.Event{Time: at, Type: evaluator.EventAlertError, Name: "Broken", Service: fmt.Sprintf("svc%d", i), Route: "a", Reasons: []string{"divide by zero"}})
	}
	events = append(events, evaluator.Event{Time: at, Type: evaluator.EventLevel, Service: "svc0", Route: "a", From: "normal", To: "warm"},
		evaluator.Event{Time: at, Type: evaluator.EventLevel, Service: "svc1", Route: "a", From: "normal", To: "warm"})
	s.Tick(t.Context(), &tick.Result{Time: at, Events: events})
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 4 {
		t.Fatalf("%d log lines, want 4 (two level changes, one for the splits, one for the alert):\n%s", len(lines), logs.String())
	}
	for _, want := range []string{`events=1000 first="[svc0 svc1 svc2]"`, `alert=Broken targets=1000`, `msg="route level" service=svc1`} {
		if !strings.Contains(logs.String(), want) {
			t.Errorf("log lacks %q:\n%s", want, logs.String())
		}
	}
	if n := strings.Count(audit.String(), "\n"); n != 1002 {
		t.Errorf("audit log has %d lines, want 1002 (every split and level change, no alert error)", n)
	}
}

// TestFailingAlertExpressionLoggedOnce: an alert expression that fails at
// every tick is one line, a reminder after condlog.RemindEvery, and one line when
// it works again.
func TestFailingAlertExpressionLoggedOnce(t *testing.T) {
	var logs testenv.Buffer
	s := New(slog.New(slog.NewTextHandler(&logs, nil)), auditlog.New(io.Discard))
	ts := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	failing := func(v int) []evaluator.Event {
		return []evaluator.Event{{Time: ts, Type: evaluator.EventAlertError, Name: "Broken", Service: "chat", Route: "a",
			Reasons: []string{fmt.Sprintf("the expression gave float64 %d, not a boolean", v)}}}
	}
	for i := range 41 { // ten minutes and one tick
		s.Tick(t.Context(), &tick.Result{Time: ts, Events: failing(i)})
		ts = ts.Add(15 * time.Second)
	}
	s.Tick(t.Context(), &tick.Result{Time: ts})
	if n := strings.Count(logs.String(), "alert expression failed"); n != 2 {
		t.Errorf("41 failing ticks logged %d lines, want 2 (the start and a reminder):\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), `msg="still: alert expression failed`); n != 1 {
		t.Errorf("ten minutes of failure logged %d reminders, want 1:\n%s", n, logs.String())
	}
	if n := strings.Count(logs.String(), `msg="alert expression works again" alert=Broken`); n != 1 {
		t.Errorf("the end logged %d lines, want 1:\n%s", n, logs.String())
	}
}

// TestAuditLogRendersAlertText: an alert event leaves the core with the
// values its condition held with, not its text (evaluator.Event.Env);
// its audit line carries the annotations rendered, as Alertmanager gets
// them.
func TestAuditLogRendersAlertText(t *testing.T) {
	var audit bytes.Buffer
	s := New(slog.New(slog.DiscardHandler), auditlog.New(&audit))
	p := testenv.DefaultPolicy(t)
	at := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	e := evaluator.Event{Time: at, Type: evaluator.EventAlert, Service: "chat", Route: "free", Name: "HermesRouteFailedOver", Tier: "A", State: "firing",
		Env: &rules.AlertEnv{Service: "chat", Route: "free", Level: "failover", MovedBy: []string{"hard_fail_ratio 0.5 (-50.0)"}, MovedTo: "failover", MovedAt: "2026-12-06T07:59:45Z"}}
	s.Tick(t.Context(), &tick.Result{Time: at, Policy: p, Events: []evaluator.Event{e}})
	var got evaluator.Event
	if err := json.Unmarshal(audit.Bytes(), &got); err != nil {
		t.Fatalf("audit log %q: %v", audit.String(), err)
	}
	want := p.EventText(&e)
	if !maps.Equal(got.Annotations, want) || want["summary"] != "Traffic of chat was failed over away from route free." ||
		want["description"] != "Moved by hard_fail_ratio 0.5 (-50.0) (failover at 2026-12-06T07:59:45Z)." {
		t.Errorf("audit annotations %v, want %v", got.Annotations, want)
	}
}
