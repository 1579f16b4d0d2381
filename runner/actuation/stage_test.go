package actuation

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/actuators/actuatortest"
	"github.com/hermes-failover/hermes/actuators/webhook"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/runner/auditlog"
	"github.com/hermes-failover/hermes/runner/tick"
	"github.com/hermes-failover/hermes/traffic"
)

// hookSecret signs the webhook's payloads in these tests.
const hookSecret = "hold-test-secret"

// TestWithheldLoggedOncePerReason: a fleet withheld for want of data is
// one log line, with the count and the first few services, and only when
// the withheld services change.
func TestWithheldLoggedOncePerReason(t *testing.T) {
	var logs testenv.Buffer
	s := New(Options{Logger: slog.New(slog.NewTextHandler(&logs, nil)), Registerer: prometheus.NewRegistry(), Now: time.Now})
	withheld := map[string]string{}
	for i := range 1000 {
		withheld[fmt.Sprintf("svc%03d", i)] = WithheldNoData
	}
	withheld["other"] = WithheldUnknownSplit
	s.noteWithheld(evaluator.State{}, withheld)
	s.noteWithheld(evaluator.State{}, withheld)
	lines := strings.Split(strings.TrimSpace(logs.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `reason=no_data services=1000 first="[svc000 svc001 svc002]"`) ||
		!strings.Contains(lines[1], `reason=unknown_split services=1 first=[other]`) {
		t.Errorf("logged:\n%s", logs.String())
	}
}

// TestWebhookDriftUntilAcknowledged is item 14 with the real webhook
// actuator and a real receiver: the receiver took free=100, then answers
// 503 to the failover. hermes_actuator_drift is 1 until it acknowledges
// (it stayed 0, the value of the last successful apply), then 0.
func TestWebhookDriftUntilAcknowledged(t *testing.T) {
	var down atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "down", http.StatusServiceUnavailable)
			return
		}
		w.WriteHeader(http.StatusNoContent)
	}))
	defer srv.Close()
	hook, err := webhook.New(actuatortest.Settings(webhook.Kind, map[string]any{"url": srv.URL, "secret": hookSecret, "max_retries": 0}))
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	stage := New(Options{Now: time.Now, Logger: slog.New(slog.DiscardHandler), Audit: auditlog.New(io.Discard), Registerer: reg})
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	apply := func(weights map[string]int) float64 {
		t.Helper()
		sp := traffic.Split{Weights: weights, RetriesEnabled: true}
		stage.actuate(t.Context(), &tick.Result{Time: time.Now(), Config: cfg, Actuators: []actuators.Actuator{hook},
			Next: evaluator.State{Services: map[string]*traffic.Split{"chat": &sp}}}, nil)
		return testenv.Metric(t, reg, "hermes_actuator_drift", map[string]string{"actuator": webhook.Kind})
	}
	normal := map[string]int{"free": 100, "paid-standard": 0, "paid-premium": 0}
	failover := map[string]int{"free": 0, "paid-standard": 100, "paid-premium": 0}
	if d := apply(normal); d != 0 {
		t.Fatalf("drift %v after an acknowledged POST, want 0", d)
	}
	down.Store(true)
	for i := range 2 {
		if d := apply(failover); d != 1 {
			t.Errorf("tick %d of the receiver answering 503: drift %v, want 1", i+1, d)
		}
	}
	down.Store(false)
	if d := apply(failover); d != 0 {
		t.Errorf("drift %v once the receiver acknowledged, want 0", d)
	}
}

// TestShiftClockMovesEveryTime: a wall-clock jump moves both times of
// every actuator's outcome and leaves a zero time zero; Outcome has no
// other time, which ShiftClock would miss (it moves them by hand, not by
// runner's reflective shiftTimes).
func TestShiftClockMovesEveryTime(t *testing.T) {
	var times []string
	for f := range reflect.TypeFor[Outcome]().Fields() {
		if f.Type == reflect.TypeFor[time.Time]() {
			times = append(times, f.Name)
		}
	}
	if want := []string{"At", "FailingSince"}; !slices.Equal(times, want) {
		t.Fatalf("Outcome's times are %v, ShiftClock moves %v", times, want)
	}
	s := New(Options{Logger: slog.New(slog.DiscardHandler), Registerer: prometheus.NewRegistry(), Now: time.Now})
	at := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	s.outcomes["ok"] = Outcome{Actuator: "ok", At: at, OK: true}
	s.outcomes["failing"] = Outcome{Actuator: "failing", At: at, FailingSince: at.Add(-time.Minute), Error: "refused"}
	s.ShiftClock(-time.Hour)
	want := []Outcome{
		{Actuator: "failing", At: at.Add(-time.Hour), FailingSince: at.Add(-time.Minute - time.Hour), Error: "refused"},
		{Actuator: "ok", At: at.Add(-time.Hour), OK: true},
	}
	if got := s.Outcomes(); !slices.Equal(got, want) {
		t.Errorf("after a jump of -1h the outcomes are %+v, want %+v", got, want)
	}
}
