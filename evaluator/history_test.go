package evaluator

import (
	"testing"
	"time"
)

func TestHistoryKeepsTheLast(t *testing.T) {
	h := NewHistory(3, 2)
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	for i := range 5 {
		at := t0.Add(time.Duration(i) * 15 * time.Second)
		h.Add(Tick{Time: at}, []Event{{Time: at, Type: EventLevel}})
	}
	ticks, events := h.Since(time.Time{})
	if len(ticks) != 3 || !ticks[0].Time.Equal(t0.Add(30*time.Second)) || len(events) != 2 || !events[0].Time.Equal(t0.Add(45*time.Second)) {
		t.Fatalf("ticks %v, events %v", ticks, events)
	}
	if ticks, events := h.Since(t0.Add(time.Minute)); len(ticks) != 1 || len(events) != 1 {
		t.Errorf("since the last tick: %d ticks, %d events", len(ticks), len(events))
	}
}
