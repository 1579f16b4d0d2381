package persist

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/traffic"
)

// TestMoveRecordSurvivesRestart: the move record of a route below normal
// is saved in the local state file when it changes, and put back on the
// restored route, so the pages after a restart name the cause of the
// move, not the score of the first tick.
func TestMoveRecordSurvivesRestart(t *testing.T) {
	t0 := time.Date(2026, 12, 6, 23, 34, 55, 0, time.UTC)
	move := &evaluator.Move{Incident: t0, At: t0, To: traffic.Failover, Why: "decisive evidence at 99.9999 % (no dwell)",
		Signals: []evaluator.MoveSignal{{Signal: "error_body_ratio", Value: 0.3, Penalty: 50, Text: "error_body_ratio 0.3 (-50.0): 72 of 240 calls in 2m: ≥ 21.8 % at 99.9 %"}}}
	prev := evaluator.State{Routes: map[string]*evaluator.RouteState{"free": {SavedRoute: evaluator.SavedRoute{Level: traffic.Normal}}}}
	next := evaluator.State{Routes: map[string]*evaluator.RouteState{"free": {SavedRoute: evaluator.SavedRoute{Level: traffic.Failover, Since: t0}, Move: move}}}
	if !LocalChanged(prev, next) {
		t.Fatal("a new move record is not a change of the local state file")
	}
	if LocalChanged(next, next.Clone()) {
		t.Fatal("the same move record is a change of the local state file")
	}
	path := filepath.Join(t.TempDir(), LocalFileName)
	if err := SaveLocal(path, LocalOf(next, t0)); err != nil {
		t.Fatal(err)
	}
	local, err := ReadLocal(path)
	if err != nil {
		t.Fatal(err)
	}
	// As restored from the series: the level, without the record; and a
	// route that came back at normal while Hermes was down.
	st := evaluator.State{Routes: map[string]*evaluator.RouteState{
		"free":          {SavedRoute: evaluator.SavedRoute{Level: traffic.Failover, Since: t0}},
		"paid-standard": {SavedRoute: evaluator.SavedRoute{Level: traffic.Normal}},
	}}
	local.Moves["paid-standard"] = move
	restoreMoves(&st, local.Moves)
	got := st.Routes["free"].Move
	if got == nil || got.String() != move.String() || !got.Incident.Equal(t0) {
		t.Fatalf("restored move %v, want %v", got, move)
	}
	if m := st.Routes["paid-standard"].Move; m != nil {
		t.Fatalf("a route restored at normal got the move record %v", m)
	}
}
