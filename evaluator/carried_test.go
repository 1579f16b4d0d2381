package evaluator

import (
	"testing"
	"time"
)

// TestCarriedOnlyFromFullData: a held score is Carried only when the
// score it shows was computed with full data; a route blind since its
// first tick shows a score never judged.
func TestCarriedOnlyFromFullData(t *testing.T) {
	p := defaultPolicy(t)
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	blind := func(at time.Time) Snapshot { return snap(p, at, map[string]any{"free.probe_success": "no data"}) }
	tick := func(s State, sn Snapshot) State {
		next, _ := Step(p, s, Input{Snapshot: sn}, sn.Time)
		return next
	}
	s := tick(State{}, blind(t0))
	s = tick(s, blind(t0.Add(15*time.Second)))
	if sc := s.Routes["free"].Score; !sc.Held() || sc.Carried {
		t.Errorf("blind since the start: held %v carried %v, want held, not carried", sc.Held(), sc.Carried)
	}
	s = tick(s, snap(p, t0.Add(30*time.Second), nil))
	for i := range 2 {
		s = tick(s, blind(t0.Add(time.Duration(45+15*i)*time.Second)))
		if sc := s.Routes["free"].Score; !sc.Carried {
			t.Errorf("blind tick %d after full data: not carried", i+1)
		}
	}
}
