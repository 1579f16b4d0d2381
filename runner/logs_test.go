package runner

import (
	"fmt"
	"log/slog"
	"strings"
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
