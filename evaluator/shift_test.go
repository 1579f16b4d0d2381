package evaluator

import (
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/traffic"
)

// The tests of this file were actuators' RateLimit's: the core plans the
// same steps the wrapper applied (the baseline now being the split the
// state carries, not one read from a backend).

func split(w map[string]int, levels map[string]traffic.Level) traffic.Split {
	return traffic.Split{Weights: w, Levels: levels, RetriesEnabled: true}
}

func TestLimitShiftSteps(t *testing.T) {
	from := split(map[string]int{"free": 100, "paid": 0}, nil)
	shed := split(map[string]int{"free": 50, "paid": 50}, map[string]traffic.Level{"free": traffic.Shed, "paid": traffic.Normal})
	prev := &from
	for i, want := range []map[string]int{
		{"free": 80, "paid": 20},
		{"free": 60, "paid": 40},
		{"free": 50, "paid": 50},
		{"free": 50, "paid": 50},
	} {
		got := limitShift(prev, shed, 20)
		if !maps.Equal(got.Weights, want) {
			t.Fatalf("tick %d: planned %v, want %v", i+1, got.Weights, want)
		}
		limited := slices.ContainsFunc(got.Reasons, func(r string) bool { return strings.HasPrefix(r, "rate limit:") })
		if limited != (i < 2) {
			t.Errorf("tick %d: reasons %q", i+1, got.Reasons)
		}
		if i == 0 && (len(got.Reasons) != 1 || got.Reasons[0] != "rate limit: moving 20 of 50 points toward the desired split this tick (max_shift_per_tick 20)") {
			t.Errorf("reasons = %q", got.Reasons)
		}
		if !got.RetriesEnabled || got.Levels["free"] != traffic.Shed {
			t.Errorf("tick %d: flags or levels lost: %+v", i+1, got)
		}
		prev = &got
	}
	if len(shed.Reasons) != 0 || shed.Weights["free"] != 50 {
		t.Error("limitShift modified the caller's target")
	}
}

func TestLimitShiftDrainsFailedRoutesAtOnce(t *testing.T) {
	for _, tc := range []struct {
		name     string
		from, to map[string]int
		levels   map[string]traffic.Level
		want     map[string]int
	}{
		{
			name:   "failover moves everything at once",
			from:   map[string]int{"free": 100, "paid": 0},
			to:     map[string]int{"free": 0, "paid": 100},
			levels: map[string]traffic.Level{"free": traffic.Failover, "paid": traffic.Normal},
			want:   map[string]int{"free": 0, "paid": 100},
		},
		{
			name:   "manual drain plus a limited healthy shift",
			from:   map[string]int{"a": 50, "b": 50, "c": 0},
			to:     map[string]int{"a": 0, "b": 20, "c": 80},
			levels: map[string]traffic.Level{"a": traffic.Manual, "b": traffic.Shed},
			want:   map[string]int{"a": 0, "b": 40, "c": 60},
		},
		{
			name:   "the same move without levels is limited",
			from:   map[string]int{"free": 100, "paid": 0},
			to:     map[string]int{"free": 0, "paid": 100},
			levels: nil,
			want:   map[string]int{"free": 90, "paid": 10},
		},
		{
			name:   "failing back to a recovered route is limited",
			from:   map[string]int{"free": 0, "paid": 100},
			to:     map[string]int{"free": 100, "paid": 0},
			levels: map[string]traffic.Level{"free": traffic.Failback, "paid": traffic.Normal},
			want:   map[string]int{"free": 10, "paid": 90},
		},
		{
			name:   "largest remainder, ties by name",
			from:   map[string]int{"a": 100, "b": 0, "c": 0, "d": 0},
			to:     map[string]int{"a": 40, "b": 20, "c": 20, "d": 20},
			levels: nil,
			want:   map[string]int{"a": 90, "b": 4, "c": 3, "d": 3},
		},
		{
			// A reload removed the route: the backend may no longer know
			// it, so it is never asked for it again (nginx would refuse
			// every tick, and the service's traffic could no longer move).
			name:   "a route the target drops (removed by a reload) drains at once",
			from:   map[string]int{"old": 100},
			to:     map[string]int{"new": 100},
			levels: nil,
			want:   map[string]int{"new": 100},
		},
		{
			name:   "a removed route drains at once while healthy routes stay limited",
			from:   map[string]int{"gone": 50, "a": 50, "b": 0},
			to:     map[string]int{"a": 0, "b": 100},
			levels: map[string]traffic.Level{"a": traffic.Shed, "b": traffic.Normal},
			want:   map[string]int{"a": 40, "b": 60},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			from := split(tc.from, nil)
			if got := limitShift(&from, split(tc.to, tc.levels), 10).Weights; !maps.Equal(got, tc.want) {
				t.Errorf("planned %v, want %v", got, tc.want)
			}
		})
	}
}

func TestLimitShiftWithoutABaseline(t *testing.T) {
	target := split(map[string]int{"free": 0, "paid": 100}, nil)
	bad := split(map[string]int{"free": 60, "paid": 60}, nil) // not a split: sums to 120
	for name, from := range map[string]*traffic.Split{"none": nil, "not summing to 100": &bad} {
		if got := limitShift(from, target, 10); !maps.Equal(got.Weights, target.Weights) || len(got.Reasons) != 0 {
			t.Errorf("%s: planned %v %q, want the target as is", name, got.Weights, got.Reasons)
		}
	}
	from := split(map[string]int{"free": 100, "paid": 0}, nil)
	for _, n := range []int{0, -1, 100} {
		if got := limitShift(&from, target, n); !maps.Equal(got.Weights, target.Weights) {
			t.Errorf("max %d: planned %v, want the target (no limit)", n, got.Weights)
		}
	}
}

// TestLimitShiftConverges checks random moves: every step is a split of
// non-negative integers summing to 100, moves at most maxShift points off
// healthy routes, and the target is reached in ceil(points/maxShift) ticks.
func TestLimitShiftConverges(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	randomSplit := func(routes []string) map[string]int {
		w := map[string]int{}
		left := 100
		for i, r := range routes {
			n := left
			if i < len(routes)-1 {
				n = rng.IntN(left + 1)
			}
			w[r] = n
			left -= n
		}
		return w
	}
	for i := range 500 {
		routes := []string{"a", "b", "c", "d"}[:2+rng.IntN(3)]
		from, to := randomSplit(routes), randomSplit(routes)
		levels := map[string]traffic.Level{}
		for _, r := range routes {
			if rng.IntN(4) == 0 {
				levels[r] = traffic.Failover
			}
		}
		maxShift := 1 + rng.IntN(40)
		healthyLoss := 0
		for _, r := range routes {
			if d := from[r] - to[r]; d > 0 && levels[r] != traffic.Failover {
				healthyLoss += d
			}
		}
		prev := split(from, nil)
		ticks := 0
		for ; ticks < 200; ticks++ {
			next := limitShift(&prev, split(to, levels), maxShift)
			got := next.Weights
			sum, healthyMoved := 0, 0
			for r, w := range got {
				sum += w
				if w < 0 {
					t.Fatalf("case %d: negative weight in %v", i, got)
				}
				if d := prev.Weights[r] - w; d > 0 && levels[r] != traffic.Failover {
					healthyMoved += d
				}
			}
			if sum != 100 || healthyMoved > maxShift {
				t.Fatalf("case %d: %v → %v (target %v, levels %v, max %d): sum %d, %d points off healthy routes",
					i, prev.Weights, got, to, levels, maxShift, sum, healthyMoved)
			}
			prev = next
			if maps.Equal(got, to) {
				break
			}
		}
		if want := (healthyLoss + maxShift - 1) / maxShift; ticks+1 != max(want, 1) {
			t.Errorf("case %d: %v → %v with max %d took %d ticks, want %d", i, from, to, maxShift, ticks+1, max(want, 1))
		}
	}
}

// TestShiftLimits: a service takes the smallest limit of the actuators
// writing it; an actuator without services writes them all. The loader
// derives each service's limit (config.Config.Rules); the plan reads it.
func TestShiftLimits(t *testing.T) {
	cfg := &config.Config{
		Policy: rules.Policy{Services: []rules.ServiceConfig{{Name: "chat"}, {Name: "embed"}, {Name: "search"}}},
		Actuators: []config.ActuatorConfig{
			{Type: "nginx", MaxShiftPerTick: 40},
			{Type: "webhook", Services: []string{"chat"}, MaxShiftPerTick: 20},
			{Type: "file", Services: []string{"embed"}, MaxShiftPerTick: 100}, // no limit
			{Type: "dns", Services: []string{"search"}},
		},
	}
	if got, want := shiftLimits(cfg.Rules()), []int{20, 40, 40}; !slices.Equal(got, want) {
		t.Errorf("limits = %v, want %v", got, want)
	}
	if cfg.Services[0].MaxShiftPerTick != 0 {
		t.Errorf("Rules wrote the limit into the loaded config's services")
	}
	cfg.Actuators = cfg.Actuators[1:]
	if got, want := shiftLimits(cfg.Rules()), []int{20, 0, 0}; !slices.Equal(got, want) {
		t.Errorf("limits without the fleet-wide one = %v, want %v", got, want)
	}
}
