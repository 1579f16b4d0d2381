package runner

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// TestAuditStageLogsAFleetOnce: a tick whose events of one type are more
// than burstEvents (every service's first split at a start-up) logs one
// line for them, with the count and the first few; fewer are logged one
// by one; failures of one alert expression are one line whatever the
// targets; the audit log keeps every event.
func TestAuditStageLogsAFleetOnce(t *testing.T) {
	var logs, audit testenv.Buffer
	s := &auditStage{log: slog.New(slog.NewTextHandler(&logs, nil)), audit: NewAuditLog(&audit)}
	tick := time.Date(2026, 12, 6, 5, 0, 0, 0, time.UTC)
	var events []evaluator.Event
	for i := range 1000 {
		events = append(events, evaluator.Event{Time: tick, Type: evaluator.EventTraffic, Service: fmt.Sprintf("svc%d", i), Weights: map[string]int{"a": 100}})
		events = append(events, evaluator.Event{Time: tick, Type: evaluator.EventAlertError, Name: "Broken", Service: fmt.Sprintf("svc%d", i), Route: "a", Reasons: []string{"divide by zero"}})
	}
	events = append(events, evaluator.Event{Time: tick, Type: evaluator.EventLevel, Service: "svc0", Route: "a", From: "normal", To: "warm"},
		evaluator.Event{Time: tick, Type: evaluator.EventLevel, Service: "svc1", Route: "a", From: "normal", To: "warm"})
	s.Tick(t.Context(), &tickResult{Time: tick, Events: events})
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

// TestWithheldLoggedOncePerReason: a fleet withheld for want of data is
// one log line, with the count and the first few services, and only when
// the withheld services change.
func TestWithheldLoggedOncePerReason(t *testing.T) {
	var logs testenv.Buffer
	s := newActuationStage(Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Registerer: prometheus.NewRegistry(), Now: time.Now})
	withheld := map[string]string{}
	for i := range 1000 {
		withheld[fmt.Sprintf("svc%03d", i)] = withheldNoData
	}
	withheld["other"] = withheldUnknownSplit
	s.noteWithheld(evaluator.State{}, withheld)
	s.noteWithheld(evaluator.State{}, withheld)
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `reason=no_data services=1000 first="[svc000 svc001 svc002]"`) ||
		!strings.Contains(lines[1], `reason=unknown_split services=1 first=[other]`) {
		t.Errorf("logged:\n%s", logs.String())
	}
}

// TestConditionLogOncePerCondition: a condition that holds for many
// ticks is one line when it starts, one when it changes, a reminder
// every remindEvery and one line when it ends; a condition of another
// key is a line of its own.
func TestConditionLogOncePerCondition(t *testing.T) {
	var logs testenv.Buffer
	c := newConditionLog(slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: dropTime})))
	now := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	step := func(holding map[string]condLine) {
		c.observe(now, "g", holding)
		now = now.Add(15 * time.Second)
	}
	failing := func(same string) map[string]condLine {
		return map[string]condLine{"a": {level: slog.LevelWarn, msg: "a fails", attrs: []any{"why", same}, same: same}}
	}
	for range 39 { // 9m45s: no reminder yet
		step(failing("refused"))
	}
	step(failing("refused")) // 10m: the reminder
	step(failing("refused"))
	step(failing("timeout")) // a change
	both := failing("timeout")
	both["b"] = condLine{level: slog.LevelError, msg: "b fails", end: "b works again"}
	step(both)
	step(both)
	step(failing("timeout")) // b ends
	step(nil)                // a ends
	step(nil)
	want := []string{
		`level=WARN msg="a fails" why=refused`,
		`level=WARN msg="still: a fails" why=refused since=2026-12-06T08:00:00.000Z ticks=41`,
		`level=WARN msg="changed: a fails" why=timeout since=2026-12-06T08:00:00.000Z`,
		`level=ERROR msg="b fails"`,
		`level=INFO msg="b works again" lasted=30s ticks=2`,
		`level=INFO msg="ended: a fails" why=timeout lasted=11m15s ticks=45`,
	}
	if got := strings.TrimSpace(logs.String()); got != strings.Join(want, "\n") {
		t.Errorf("logged\n%s\nwant\n%s", got, strings.Join(want, "\n"))
	}
}

// TestFailingQueriesLoggedOnce: ticks whose every query fails log one
// line for the failed queries and one for not ready, however many ticks;
// the end of the failure is one line each; a different failure is a new
// line.
func TestFailingQueriesLoggedOnce(t *testing.T) {
	var logs testenv.Buffer
	fp := &fakeProm{soft: 0.02, fail: syscall.ECONNREFUSED}
	r, _ := newFileRunner(t, fp, t.TempDir(), Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: dropTime}))})
	ts := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	tick := func() {
		r.tick(t.Context(), ts)
		ts = ts.Add(15 * time.Second)
	}
	count := func(msg string) int { return strings.Count(logs.String(), `msg="`+msg) }
	const n = 30
	for range n {
		tick()
	}
	if failed, notReady := count("signal queries failed"), count("not ready"); failed != 1 || notReady != 1 {
		t.Fatalf("%d ticks logged %d lines for the failed queries and %d for not ready, want 1 each:\n%s", n, failed, notReady, logs.String())
	}
	if !strings.Contains(logs.String(), `reason=connection signals=`) || !strings.Contains(logs.String(), `detail="connection refused"`) {
		t.Errorf("the line lacks the reason or the detail:\n%s", logs.String())
	}
	fp.mu.Lock()
	fp.fail = nil
	fp.mu.Unlock()
	tick()
	tick()
	if again, ready := count("signal queries answer again"), count("ready: the tick had data"); again != 1 || ready != 1 {
		t.Fatalf("the end logged %d lines for the queries and %d for ready, want 1 each:\n%s", again, ready, logs.String())
	}
	fp.mu.Lock()
	fp.fail = context.DeadlineExceeded
	fp.mu.Unlock()
	tick()
	tick()
	if failed := count("signal queries failed"); failed != 2 || !strings.Contains(logs.String(), "reason=timeout") {
		t.Errorf("another failure logged %d lines in all for failed queries, want 2 (one per failure):\n%s", failed, logs.String())
	}
}
