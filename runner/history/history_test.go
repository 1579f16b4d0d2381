package history

import (
	"maps"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/traffic"
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

// TestAddStateAsAdd holds AddState to Add of the state's evaluator.TickOf
// with the given splits in place of the planned ones, over random ticks in
// which routes and services come and go, splits change their routes, and
// some services are recorded with a split of their own: the same ticks
// come back, and a new layout is made exactly when Add makes one.
func TestAddStateAsAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	pool := []string{"a", "b", "c", "d", "e", "f"}
	levels := []traffic.Level{traffic.Normal, traffic.Shed, traffic.Failover, traffic.Failback, traffic.Manual}
	routes := pool[:4]
	services := map[string][]string{"chat": {"a", "b"}, "code": {"c", "d"}}
	byAdd, byState := New(50, 10), New(50, 10)
	byAdd.MaxRouteTicks, byState.MaxRouteTicks = 60, 60
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.FixedZone("x", 3600))
	newLayouts := 0
	for i := range 400 {
		switch rng.IntN(8) {
		case 0: // a route comes or goes
			routes = pool[:2+rng.IntN(len(pool)-1)]
		case 1: // a service's split changes its routes
			services["chat"] = pool[rng.IntN(2) : 2+rng.IntN(3)]
		case 2: // a service comes or goes
			if _, ok := services["voice"]; ok {
				delete(services, "voice")
			} else {
				services["voice"] = []string{"e"}
			}
		}
		s := evaluator.State{Routes: map[string]*evaluator.RouteState{}, Services: map[string]*traffic.Split{}}
		for _, r := range routes {
			rs := &evaluator.RouteState{}
			rs.Score.Value = rng.Float64()*120 - 10
			if rng.IntN(10) == 0 {
				rs.Score.Value = math.NaN()
			}
			rs.Level, rs.Stage = levels[rng.IntN(len(levels))], rng.IntN(4)-1
			s.Routes[r] = rs
		}
		for svc, rs := range services {
			w := map[string]int{}
			for _, r := range rs {
				w[r] = rng.IntN(130) - 10
			}
			s.Services[svc] = &traffic.Split{Weights: w}
		}
		var splits map[string]map[string]int
		if rng.IntN(3) == 0 { // a service recorded with a split of its own
			splits = map[string]map[string]int{"chat": {"a": 100, pool[rng.IntN(3)]: 0}, "gone": {"x": 1}}
		}
		at := t0.Add(time.Duration(i) * 15 * time.Second)
		tk := evaluator.TickOf(at, s)
		for svc, w := range splits {
			if _, ok := tk.Splits[svc]; ok {
				tk.Splits[svc] = maps.Clone(w)
			}
		}
		byAdd.Add(tk, []evaluator.Event{{Time: at}})
		byState.AddState(at, s, splits, []evaluator.Event{{Time: at}})
		n := len(byAdd.ticks)
		if len(byState.ticks) != n {
			t.Fatalf("tick %d: %d ticks kept, Add keeps %d", i, len(byState.ticks), n)
		}
		if n > 1 && (byAdd.ticks[n-1].layout != byAdd.ticks[n-2].layout) != (byState.ticks[n-1].layout != byState.ticks[n-2].layout) {
			t.Fatalf("tick %d: AddState made a new layout: %v, Add: %v", i, byState.ticks[n-1].layout != byState.ticks[n-2].layout, byAdd.ticks[n-1].layout != byAdd.ticks[n-2].layout)
		}
		if n > 1 && byAdd.ticks[n-1].layout != byAdd.ticks[n-2].layout {
			newLayouts++
		}
		want, wantEvents := byAdd.Since(time.Time{})
		got, gotEvents := byState.Since(time.Time{})
		if len(got) != len(want) || len(gotEvents) != len(wantEvents) {
			t.Fatalf("tick %d: %d ticks and %d events, want %d and %d", i, len(got), len(gotEvents), len(want), len(wantEvents))
		}
		for k := range got {
			if !got[k].Time.Equal(want[k].Time) || got[k].Time.Location() != want[k].Time.Location() ||
				!maps.EqualFunc(got[k].Routes, want[k].Routes, func(a, b evaluator.TickRoute) bool {
					return a.Level == b.Level && a.Stage == b.Stage && (a.Score == b.Score || math.IsNaN(a.Score) && math.IsNaN(b.Score))
				}) || !maps.EqualFunc(got[k].Splits, want[k].Splits, maps.Equal) {
				t.Fatalf("tick %d, kept tick %d: %+v, want %+v", i, k, got[k], want[k])
			}
		}
	}
	if newLayouts < 20 {
		t.Errorf("only %d new layouts in 400 ticks: the layouts' reuse was hardly tested", newLayouts)
	}
}
