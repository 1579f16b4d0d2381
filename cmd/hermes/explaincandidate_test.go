package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/web/api"
)

// TestExplainTellsTheCandidate: explain ends with the candidate's standing
// on the route and the route's differing decisions, and says nothing of a
// candidate when there is none.
func TestExplainTellsTheCandidate(t *testing.T) {
	at := time.Date(2026, 12, 6, 12, 3, 0, 0, time.UTC)
	d := evaluator.Difference{By: "candidate", Other: "live", Instead: "stayed normal",
		Event: evaluator.Event{Time: at, Type: evaluator.EventLevel, Service: "chat", Route: "free", From: "normal", To: "warm"}}
	other := evaluator.Difference{By: "candidate", Other: "live", Instead: "stayed normal",
		Event: evaluator.Event{Time: at, Type: evaluator.EventLevel, Service: "chat", Route: "paid", From: "normal", To: "warm"}}
	c := &api.Candidate{File: "candidate.yaml", SeededAt: at.Add(-time.Hour),
		Routes:      []api.CandidateRoute{{Service: "chat", Route: "free", Level: "warm", LiveLevel: "normal", Score: 81, LiveScore: 81, Traffic: 95, LiveTraffic: 100}},
		Differences: []api.CandidateDifference{{Difference: other, Text: other.String()}, {Difference: d, Text: d.String()}}}
	var b bytes.Buffer
	writeCandidate(&b, c, "chat", "free")
	want := "candidate policy candidate.yaml (never applied, seeded from live at 2026-12-06T11:03:00Z):\n" +
		"  candidate: warm, score 81.0, 95% of traffic (live: normal, score 81.0, 100%)\n" +
		"  candidate: chat/free warm at 12:03:00 (live stayed normal)\n"
	if b.String() != want {
		t.Errorf("got\n%s\nwant\n%s", b.String(), want)
	}
	b.Reset()
	writeCandidate(&b, c, "chat", "paid-premium")
	if !strings.Contains(b.String(), "stands where live has the route") || !strings.Contains(b.String(), "no decision differed") {
		t.Errorf("a route the candidate agrees on:\n%s", b.String())
	}
	b.Reset()
	writeCandidate(&b, nil, "chat", "free")
	if b.Len() != 0 {
		t.Errorf("without a candidate: %q", b.String())
	}
}
