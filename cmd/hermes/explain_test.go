package main

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/traffic"
	"github.com/hermes-failover/hermes/web/api"
)

// TestExplainTellsIdleAndOptional (issue 34): explain calls a signal
// "missing" only when its lack holds the level; a signal that needs
// traffic on an idle route is "idle", an optional one without data
// "optional, not exported".
func TestExplainTellsIdleAndOptional(t *testing.T) {
	b := &backend{}
	st := b.Status()
	rt := &st.Services[0].Routes[0]
	rt.Missing = []string{"p99_ratio"}
	rt.Contributions = api.ContributionsOf([]evaluator.Contribution{
		{Signal: "soft_fail_ratio", Value: math.NaN(), Status: evaluator.StatusMissing, Reason: "no calls", Idle: true, CapsAt: -1},
		{Signal: "retry_ratio", Value: math.NaN(), Status: evaluator.StatusMissing, Reason: "no data", CapsAt: -1},
		{Signal: "quality_score", Value: math.NaN(), Status: evaluator.StatusError, Reason: "bad_data", CapsAt: -1},
		{Signal: "p99_ratio", Value: math.NaN(), Status: evaluator.StatusMissing, Reason: "no data", CapsAt: -1},
	})
	b.st = &st
	_, url := serve(t, b, "")
	code, out, errb := hermes(t, "explain", "--url", url, "--route", "free")
	if code != 0 {
		t.Fatalf("explain: %d %s", code, errb)
	}
	for _, want := range []string{
		"  soft_fail_ratio  -      idle                    idle (no user traffic), (no calls)\n",
		"  retry_ratio      -      optional, not exported  (no data)\n",
		"  quality_score    -      optional, failing       (bad_data)\n",
		"  p99_ratio        -      missing                 (no data)\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("explain lacks %q:\n%s", want, out)
		}
	}
}

// TestExplainSaysTheOverridesExpiry: explain says when a service's pin
// or pause lapses, or that it never does.
func TestExplainSaysTheOverridesExpiry(t *testing.T) {
	b := &backend{}
	st := b.Status()
	st.Services[0].Override = &evaluator.Override{Kind: "pin", Route: "paid-standard", Reason: "launch", Expires: time.Unix(1000, 0).Add(time.Hour)}
	b.st = &st
	_, url := serve(t, b, "")
	if _, out, _ := hermes(t, "explain", "--url", url, "--route", "free"); !strings.Contains(out, "service override: pin paid-standard (launch), expires 1970-01-01T01:16:40Z\n") {
		t.Errorf("explain does not say the pin's expiry:\n%s", out)
	}
	st.Services[0].Override.Expires = time.Time{}
	if _, out, _ := hermes(t, "explain", "--url", url, "--route", "free"); !strings.Contains(out, "service override: pin paid-standard (launch), no expiry\n") {
		t.Errorf("explain does not say the pin never expires:\n%s", out)
	}
}

// TestExplainSaysWhatMovedTheRoute (issue 34): explain gives a route below
// normal the cause of its move, fixed at the move (the status API's
// moved), not only the score of the tick, which on a failed-over route
// shows its probes; a route at normal has none.
func TestExplainSaysWhatMovedTheRoute(t *testing.T) {
	b := &backend{}
	st := b.Status()
	at := time.Date(2026, 12, 6, 23, 34, 55, 0, time.UTC)
	move := &evaluator.Move{Incident: at, At: at, To: traffic.Failover, Why: "decisive evidence at 99.9999 % (no dwell)",
		Signals: []evaluator.MoveSignal{{Signal: "error_body_ratio", Value: 0.3, Penalty: 50, Text: "error_body_ratio 0.3 (-50.0): 72 of 240 calls in 2m: ≥ 21.8 % at 99.9 %"}}}
	rt := &st.Services[0].Routes[0]
	rt.Moved = move.String()
	b.st = &st
	_, url := serve(t, b, "")
	code, out, errb := hermes(t, "explain", "--url", url, "--route", rt.Name)
	if code != 0 {
		t.Fatalf("explain: %d %s", code, errb)
	}
	want := "moved to failover at 2026-12-06T23:34:55Z (decisive evidence at 99.9999 % (no dwell)): error_body_ratio 0.3 (-50.0): 72 of 240 calls in 2m: ≥ 21.8 % at 99.9 %\n"
	if !strings.Contains(out, want) {
		t.Errorf("explain lacks the move's cause %q:\n%s", want, out)
	}
	rt.Moved = ""
	if _, out, _ := hermes(t, "explain", "--url", url, "--route", rt.Name); strings.Contains(out, "moved to") {
		t.Errorf("explain gives a cause to a route without a move record:\n%s", out)
	}
}
