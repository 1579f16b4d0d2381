package unleash

import (
	"maps"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/traffic"
)

func TestVariantsFor(t *testing.T) {
	v := func(name string, w int, typ string) variant {
		return variant{Name: name, Weight: w, WeightType: typ, Stickiness: "default"}
	}
	for _, tc := range []struct {
		weights map[string]int
		want    []variant
		err     string
	}{
		{
			weights: map[string]int{"free": 100, "paid": 0, "backup": 0},
			want:    []variant{v("backup", 0, "fix"), v("free", 1000, "variable"), v("paid", 0, "fix")},
		},
		{
			weights: map[string]int{"free": 95, "paid": 5},
			want:    []variant{v("free", 950, "variable"), v("paid", 50, "fix")},
		},
		{
			// A tie: the first by name holds the remainder.
			weights: map[string]int{"paid": 50, "free": 50},
			want:    []variant{v("free", 500, "variable"), v("paid", 500, "fix")},
		},
		{
			weights: map[string]int{"free": 0, "paid": 100},
			want:    []variant{v("free", 0, "fix"), v("paid", 1000, "variable")},
		},
		{weights: map[string]int{"only": 100}, want: []variant{v("only", 1000, "variable")}},
		{weights: nil, err: "no routes"},
		{weights: map[string]int{"free": 60, "paid": 30}, err: "weights sum to 90, want 100"},
		{weights: map[string]int{"free": 120, "paid": -20}, err: `route "free": weight 120 is not a percentage`},
		{weights: map[string]int{"openai/gpt": 100}, err: `route "openai/gpt" holds '/'`},
	} {
		got, err := variantsFor(tc.weights)
		switch {
		case tc.err != "":
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("variantsFor(%v): err = %v, want %q", tc.weights, err, tc.err)
			}
			continue
		case err != nil:
			t.Errorf("variantsFor(%v): %v", tc.weights, err)
			continue
		case !reflect.DeepEqual(got, tc.want):
			t.Errorf("variantsFor(%v) =\n%+v\nwant\n%+v", tc.weights, got, tc.want)
		}
		if back := weightsOf(got); !maps.Equal(back, tc.weights) {
			t.Errorf("weightsOf(variantsFor(%v)) = %v", tc.weights, back)
		}
	}
}

func TestWeightsOfRounds(t *testing.T) {
	// Weights set by hand in Unleash's UI need not be multiples of 10.
	got := weightsOf([]variant{{Name: "a", Weight: 334}, {Name: "b", Weight: 333}, {Name: "c", Weight: 333}})
	if want := map[string]int{"a": 33, "b": 33, "c": 33}; !maps.Equal(got, want) {
		t.Errorf("weightsOf = %v, want %v", got, want)
	}
}

func TestStrategyMatches(t *testing.T) {
	vs, _ := variantsFor(map[string]int{"free": 95, "paid": 5})
	want := strategyFor("routes", vs, traffic.Stamp{})
	// As Unleash returns it: an id, variants in its own order.
	have := strategyFor("routes", []variant{vs[1], vs[0]}, traffic.Stamp{})
	have.ID = "4a0c"
	if !have.matches(want) {
		t.Error("the same strategy does not match")
	}
	for name, change := range map[string]func(*strategy){
		"weight": func(s *strategy) {
			s.Variants = []variant{vs[0], {Name: "paid", Weight: 60, WeightType: "fix", Stickiness: "default"}}
		},
		"route gone": func(s *strategy) { s.Variants = vs[:1] },
		"disabled":   func(s *strategy) { s.Disabled = true },
		"rollout": func(s *strategy) {
			s.Parameters = map[string]any{"rollout": "50", "stickiness": "default", "groupId": "routes"}
		},
		"numeric": func(s *strategy) {
			s.Parameters = map[string]any{"rollout": 50.0, "stickiness": "default", "groupId": "routes"}
		},
		"constraint": func(s *strategy) { s.Constraints = append(s.Constraints, []byte(`{}`)) },
		"segment":    func(s *strategy) { s.Segments = []int{1} },
		"untitled":   func(s *strategy) { s.Title = "" },
		"kind":       func(s *strategy) { s.Name = "default" },
	} {
		s := strategyFor("routes", vs, traffic.Stamp{})
		change(&s)
		if s.matches(want) {
			t.Errorf("a strategy with another %s matches", name)
		}
	}
}

// TestStrategyStamp: the writer's stamp goes into the parameters and
// comes back from them; a renewed stamp alone still routes the same
// (matches) but is a change to write (sameStamp), and so is dropping it.
func TestStrategyStamp(t *testing.T) {
	vs, _ := variantsFor(map[string]int{"free": 95, "paid": 5})
	tick := time.Date(2026, 11, 30, 7, 12, 15, 0, time.UTC)
	a := traffic.Stamp{Replica: "hermes-a", Tick: tick}
	s := strategyFor("routes", vs, a)
	if got := stampOf(s); !got.Equal(a) {
		t.Errorf("stampOf = %+v, want %+v", got, a)
	}
	renewed := strategyFor("routes", vs, traffic.Stamp{Replica: "hermes-a", Tick: tick.Add(15 * time.Second)})
	if !s.matches(renewed) || s.sameStamp(renewed) {
		t.Errorf("a renewed stamp: matches %v, sameStamp %v; want true, false", s.matches(renewed), s.sameStamp(renewed))
	}
	none := strategyFor("routes", vs, traffic.Stamp{})
	if s.sameStamp(none) || !none.sameStamp(none) || !stampOf(none).IsZero() {
		t.Error("a stamp to drop reads as unchanged, or no stamp reads as one")
	}
	s.Parameters[paramWriterTick] = "yesterday"
	if !stampOf(s).IsZero() {
		t.Errorf("a tick that does not parse reads as %+v, want no stamp", stampOf(s))
	}
}

func TestPick(t *testing.T) {
	ss := []strategy{
		{ID: "1", Name: "default"},
		{ID: "2", Name: "flexibleRollout"},
		{ID: "3", Name: "flexibleRollout", Title: "hermes"},
	}
	ours, others := pick(ss)
	if ours == nil || ours.ID != "3" || len(others) != 2 {
		t.Errorf("pick = %+v, %+v; want the hermes one", ours, others)
	}
	ours, others = pick(ss[:2])
	if ours == nil || ours.ID != "2" || len(others) != 1 || others[0].ID != "1" {
		t.Errorf("pick = %+v, %+v; want the flexibleRollout one", ours, others)
	}
	if ours, others = pick(ss[:1]); ours != nil || len(others) != 1 {
		t.Errorf("pick = %+v, %+v; want none of ours", ours, others)
	}
}
