package backtest

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
)

func TestCompareKeepsOnlyTheDecisionsThatDiffer(t *testing.T) {
	t0 := time.Unix(0, 0).UTC()
	at := func(i int) time.Time { return t0.Add(time.Duration(i) * 15 * time.Second) }
	score := func(v float64) *float64 { return &v }
	lv := func(i int, from, to string, s float64) evaluator.Event {
		return evaluator.Event{Time: at(i), Type: evaluator.EventLevel, Service: "chat", Route: "free", From: from, To: to, Score: score(s), Reasons: []string{"why"}}
	}
	split := func(i, free int) evaluator.Event {
		return evaluator.Event{Time: at(i), Type: evaluator.EventTraffic, Service: "chat", Weights: map[string]int{"free": free, "paid": 100 - free}}
	}
	page := evaluator.Event{Time: at(9), Type: evaluator.EventAlert, Name: "HermesRouteFailedOver", Tier: "A", State: "firing", Service: "chat", Route: "free"}
	cur := &Timeline{Start: t0, End: at(10), Step: 15 * time.Second, Events: []evaluator.Event{
		split(0, 100), lv(4, "normal", "warm", 80), split(4, 95), lv(8, "warm", "failover", 50), split(8, 0), page}}
	// The candidate moves one tick earlier into warm (another score, the
	// same failover) and sends the same page.
	cand := &Timeline{Start: t0, End: at(10), Step: 15 * time.Second, Events: []evaluator.Event{
		split(0, 100), lv(3, "normal", "warm", 84), split(3, 95), lv(8, "warm", "failover", 49), split(8, 0), page}}

	same := Compare(cur, cur, nil)
	if !same.Same() || same.Current != same.Candidate {
		t.Fatalf("a timeline compared with itself differs: %+v", same)
	}
	c := Compare(cur, cand, nil)
	if len(c.OnlyCurrent) != 2 || len(c.OnlyCandidate) != 2 {
		t.Fatalf("want the warm move and its split on each side, got %v / %v", c.OnlyCurrent, c.OnlyCandidate)
	}
	if c.OnlyCurrent[0].Time != at(4) || c.OnlyCandidate[0].Time != at(3) {
		t.Errorf("differences at %v / %v", c.OnlyCurrent[0].Time, c.OnlyCandidate[0].Time)
	}
	if c.Current.Moves != 2 || c.Current.Pages != 1 || c.Current.FailedOver != 1 {
		t.Errorf("current summary %+v", c.Current)
	}
	if d := c.Decisions(); len(d) != 4 || d[0].Policy != "candidate" || d[3].Policy != "current" {
		t.Errorf("decisions out of order: %+v", d)
	}

	var text bytes.Buffer
	if err := c.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"current candidate", "2 decision(s) only under the current policy, 2 only under the candidate",
		"candidate  00:00:45  level     chat/free normal → warm", "current    00:01:00  traffic   chat free=95 paid=5",
		"score 84.0  why  (current stayed normal)", "chat free=95 paid=5  (candidate kept free=95 paid=5)"} {
		if !strings.Contains(strings.Join(strings.Fields(text.String()), " "), strings.Join(strings.Fields(want), " ")) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	var js bytes.Buffer
	if err := c.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	var out struct {
		Current       Summary           `json:"current"`
		Candidate     Summary           `json:"candidate"`
		OnlyCurrent   []evaluator.Event `json:"only_current"`
		OnlyCandidate []evaluator.Event `json:"only_candidate"`
	}
	if err := json.Unmarshal(js.Bytes(), &out); err != nil || out.Current != c.Current || len(out.OnlyCandidate) != 2 {
		t.Errorf("JSON %s: %v", js.String(), err)
	}
}

func TestUserMinutesWeighsTheShare(t *testing.T) {
	bad := func(r string) bool { return r == "free" }
	if got := UserMinutes(time.Minute, map[string]int{"free": 5, "paid": 95}, bad); got != 0.05 {
		t.Errorf("5 %% for a minute = %v user-minutes, want 0.05", got)
	}
}

// TestDegradedMinutesLeaveOutAHealthyFailback: without a ground truth, a
// route's share counts as degraded while it is below normal, but not
// while a failback stage brings it back (it has recovered); a stage that
// steps back counts again.
func TestDegradedMinutesLeaveOutAHealthyFailback(t *testing.T) {
	t0 := time.Unix(0, 0).UTC()
	tick := func(i int, level string, stage, free int) evaluator.Tick {
		return evaluator.Tick{Time: t0.Add(time.Duration(i) * time.Minute),
			Routes: map[string]evaluator.TickRoute{"free": {Level: level, Stage: stage}, "paid": {Level: "normal"}},
			Splits: map[string]map[string]int{"chat": {"free": free, "paid": 100 - free}}}
	}
	tl := &Timeline{Start: t0, End: t0.Add(5 * time.Minute), Step: time.Minute, Ticks: []evaluator.Tick{
		tick(0, "warm", 0, 95),     // degraded: 0.95
		tick(1, "failover", 0, 0),  // nothing on it
		tick(2, "failover", 1, 10), // failback stage 1: healthy
		tick(3, "failover", 2, 50), // stage 2: healthy
		tick(4, "failover", 0, 0),  // stepped back
		tick(5, "failover", 1, 10), // stage 1 again
	}}
	if got := Summarize(tl, nil).DegradedMinutes; got != 0.95 {
		t.Errorf("degraded minutes %v, want 0.95 (the warm minute only)", got)
	}
}
