package history

import (
	"maps"
	"math"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
)

func TestHistoryKeepsTheLast(t *testing.T) {
	h := New(3, 2)
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	for i := range 5 {
		at := t0.Add(time.Duration(i) * 15 * time.Second)
		h.Add(evaluator.Tick{Time: at}, []evaluator.Event{{Time: at, Type: evaluator.EventLevel}})
	}
	ticks, events := h.Since(time.Time{})
	if len(ticks) != 3 || !ticks[0].Time.Equal(t0.Add(30*time.Second)) || len(events) != 2 || !events[0].Time.Equal(t0.Add(45*time.Second)) {
		t.Fatalf("ticks %v, events %v", ticks, events)
	}
	if ticks, events := h.Since(t0.Add(time.Minute)); len(ticks) != 1 || len(events) != 1 {
		t.Errorf("since the last tick: %d ticks, %d events", len(ticks), len(events))
	}
}

// TestHistoryPacksTicks: a tick comes back as it went in (scores to a
// hundredth of a point), ticks with the same routes share their names, and
// the route-tick bound keeps fewer ticks of a large fleet.
func TestHistoryPacksTicks(t *testing.T) {
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	tick := func(i int, routes ...string) evaluator.Tick {
		tk := evaluator.Tick{Time: t0.Add(time.Duration(i) * 15 * time.Second), Routes: map[string]evaluator.TickRoute{}, Splits: map[string]map[string]int{"chat": {}}}
		for j, r := range routes {
			tk.Routes[r] = evaluator.TickRoute{Score: 100 - float64(i+j)*12.345, Level: []string{"normal", "shed", "failover"}[j%3], Stage: j % 2}
			tk.Splits["chat"][r] = 100 / len(routes)
		}
		return tk
	}
	h := New(10, 10)
	h.MaxRouteTicks = 9
	in := []evaluator.Tick{tick(0, "a", "b", "c"), tick(1, "a", "b", "c"), tick(2, "a", "b"), tick(3, "a", "b", "c"), tick(4, "a", "b", "c")}
	for _, tk := range in {
		h.Add(tk, nil)
	}
	got, _ := h.Since(time.Time{})
	if len(got) != 3 || !got[0].Time.Equal(in[2].Time) {
		t.Fatalf("kept %d ticks from %s, want the last 3 (8 route-ticks within 9)", len(got), got[0].Time)
	}
	for i, tk := range got {
		want := in[2+i]
		if !maps.EqualFunc(tk.Routes, want.Routes, func(a, b evaluator.TickRoute) bool {
			return a.Level == b.Level && a.Stage == b.Stage && math.Abs(a.Score-b.Score) <= 0.005+1e-9
		}) || !maps.EqualFunc(tk.Splits, want.Splits, maps.Equal) {
			t.Errorf("tick %d: %+v, want %+v", i, tk, want)
		}
	}
	if h.ticks[1].layout != h.ticks[2].layout || h.ticks[0].layout == h.ticks[1].layout {
		t.Error("ticks with the same routes should share one layout, others not")
	}
}
