package evaluator_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
)

// TestDifferences: the decisions one policy made at a tick that the other
// did not, in time order, each with what the other did instead; the same
// move for other numbers is no difference, and non-decisions never are.
func TestDifferences(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * 15 * time.Second) }
	score := func(v float64) *float64 { return &v }
	level := func(s int, from, to string, sc float64) evaluator.Event {
		return evaluator.Event{Time: at(s), Type: evaluator.EventLevel, Service: "chat", Route: "free", From: from, To: to, Score: score(sc), Reasons: []string{"soft_fail_ratio 0.31 (-19.0)"}}
	}
	split := func(s, free int) evaluator.Event {
		return evaluator.Event{Time: at(s), Type: evaluator.EventTraffic, Service: "chat", Weights: map[string]int{"free": free, "paid": 100 - free}}
	}
	page := func(s int) evaluator.Event {
		return evaluator.Event{Time: at(s), Type: evaluator.EventAlert, Service: "chat", Route: "free", Name: "HermesRouteFailedOver", State: "firing"}
	}
	override := evaluator.Event{Time: at(1), Type: evaluator.EventOverride, Service: "chat"}
	live := evaluator.Decisions{Name: "live", Events: []evaluator.Event{override, level(8, "normal", "failover", 50), split(8, 0), page(8)}}
	cand := evaluator.Decisions{Name: "candidate", Events: []evaluator.Event{level(4, "normal", "warm", 81), split(4, 95),
		level(8, "warm", "failover", 49), split(8, 0), page(8)}}

	if d := evaluator.Differences(live, live); len(d) != 0 {
		t.Fatalf("a policy differs from itself: %+v", d)
	}
	got := evaluator.Differences(cand, live)
	var lines []string
	for _, d := range got {
		lines = append(lines, d.String())
	}
	want := []string{
		"candidate: chat/free warm at 12:01:00 (live stayed normal): score 81.0: soft_fail_ratio 0.31 (-19.0)",
		"candidate: chat split free=95 paid=5 at 12:01:00 (live kept its split)",
		"candidate: chat/free failover at 12:02:00 (live went failover): score 49.0: soft_fail_ratio 0.31 (-19.0)",
		"live: chat/free failover at 12:02:00 (candidate went failover): score 50.0: soft_fail_ratio 0.31 (-19.0)",
	}
	if !reflect.DeepEqual(lines, want) {
		t.Errorf("differences:\n%q\nwant\n%q", lines, want)
	}
	// The same split and page at 12:02 are no difference; the live level
	// is read from the policy's own state when it has one.
	live.Level = func(route string, _ time.Time) string { return "shed" }
	live.Split = func(service string, _ time.Time) map[string]int { return map[string]int{"free": 50, "paid": 50} }
	got = evaluator.Differences(cand, live)
	if got[0].Instead != "stayed shed" || got[1].Instead != "kept free=50 paid=50" {
		t.Errorf("instead from the state: %q, %q", got[0].Instead, got[1].Instead)
	}
	// A reason that tells the score already is not repeated.
	told := level(4, "normal", "warm", 81)
	told.Reasons = []string{"score 81.0 < 85 for 1m0s", "soft_fail_ratio 0.31 (-19.0)"}
	got = evaluator.Differences(evaluator.Decisions{Name: "candidate", Events: []evaluator.Event{told}}, evaluator.Decisions{Name: "live"})
	if want := "candidate: chat/free warm at 12:01:00 (live stayed normal): score 81.0 < 85 for 1m0s; soft_fail_ratio 0.31 (-19.0)"; len(got) != 1 || got[0].String() != want {
		t.Errorf("got %v, want %q", got, want)
	}
	// A page one policy sends and the other does not.
	got = evaluator.Differences(evaluator.Decisions{Name: "candidate", Events: []evaluator.Event{page(3)}}, evaluator.Decisions{Name: "live"})
	if len(got) != 1 || got[0].Instead != "did not page" || got[0].By != "candidate" || got[0].Other != "live" {
		t.Errorf("page: %+v", got)
	}
}
