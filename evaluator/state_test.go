package evaluator_test

import (
	"maps"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/traffic"
)

// TestSameRouteSeesEveryField changes each field of a route state in turn
// and wants sameRoute to see it, and fails when RouteState, SavedRoute or
// Score gain a field this test (and so sameRoute) does not know.
func TestSameRouteSeesEveryField(t *testing.T) {
	for typ, want := range map[reflect.Type]int{
		reflect.TypeFor[evaluator.RouteState](): 5, // SavedRoute, BelowSince, RecoverSince, Score, memo
		reflect.TypeFor[evaluator.SavedRoute](): 7,
		reflect.TypeFor[evaluator.Score]():      9,
	} {
		if got := typ.NumField(); got != want {
			t.Errorf("%s has %d fields, sameRoute knows %d: compare the new ones there and here", typ, got, want)
		}
	}
	at := time.Unix(1_700_000_000, 0)
	base := evaluator.RouteState{SavedRoute: evaluator.SavedRoute{Level: traffic.Warm, Since: at, Failbacks: []time.Time{at}},
		Score: evaluator.Score{Value: 0, Contributions: []evaluator.Contribution{{Signal: "a"}}, Missing: []string{"b"}}}
	same := base
	same.Failbacks = []time.Time{at} // equal content, another slice
	if !evaluator.SameRoute(&base, &same) {
		t.Error("equal route states compare different")
	}
	for name, change := range map[string]func(*evaluator.RouteState){
		"level":         func(r *evaluator.RouteState) { r.Level = traffic.Shed },
		"since":         func(r *evaluator.RouteState) { r.Since = at.Add(time.Second) },
		"stage":         func(r *evaluator.RouteState) { r.Stage = 1 },
		"stage since":   func(r *evaluator.RouteState) { r.StageSince = at },
		"failing since": func(r *evaluator.RouteState) { r.FailingSince = at },
		"failbacks":     func(r *evaluator.RouteState) { r.Failbacks = nil },
		"released":      func(r *evaluator.RouteState) { r.Released = true },
		"below since":   func(r *evaluator.RouteState) { r.BelowSince[traffic.Shed] = at },
		"recover since": func(r *evaluator.RouteState) { r.RecoverSince = at },
		"value -0":      func(r *evaluator.RouteState) { r.Score.Value = math.Copysign(0, -1) },
		"low":           func(r *evaluator.RouteState) { r.Score.Low = 1 },
		"low floor":     func(r *evaluator.RouteState) { r.Score.LowFloor = traffic.Warm },
		"decisive":      func(r *evaluator.RouteState) { r.Score.DecisiveLevel = traffic.Warm },
		"contributions": func(r *evaluator.RouteState) { r.Score.Contributions = []evaluator.Contribution{{Signal: "a"}} },
		"missing":       func(r *evaluator.RouteState) { r.Score.Missing = nil },
		"floor":         func(r *evaluator.RouteState) { r.Score.Floor = traffic.Warm },
		"immediate":     func(r *evaluator.RouteState) { r.Score.ImmediateLevel = traffic.Warm },
		"carried":       func(r *evaluator.RouteState) { r.Score.Carried = true },
	} {
		other := base
		change(&other)
		if evaluator.SameRoute(&base, &other) {
			t.Errorf("%s: a changed route state compares the same", name)
		}
	}
}

// TestRouteOrderFollowsRoutesMap: a state whose Routes is replaced by
// another map of the same size (as a restore does) is read by name, not
// by the positions the last Step remembered for the old map.
func TestRouteOrderFollowsRoutesMap(t *testing.T) {
	p := testenv.DefaultPolicy(t)
	now := time.Unix(1_700_000_000, 0)
	var s evaluator.State
	s, _ = evaluator.Step(p, s, evaluator.Input{Snapshot: testenv.Healthy(p, now)}, now)
	s.Routes = maps.Clone(s.Routes)
	s.Routes["free"] = &evaluator.RouteState{SavedRoute: evaluator.SavedRoute{Level: traffic.Failover, Since: now}}
	now = now.Add(15 * time.Second)
	s, _ = evaluator.Step(p, s, evaluator.Input{Snapshot: testenv.Healthy(p, now)}, now)
	if got := s.Routes["free"].Level; got != traffic.Failover {
		t.Fatalf("free is %s after the tick, want failover: Step read the route states of the map before", got)
	}
	if w := s.Services["chat"].Weights["free"]; w != 0 {
		t.Fatalf("free gets %d %%, want 0", w)
	}
}
