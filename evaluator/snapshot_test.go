package evaluator_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// TestSnapshotTable: a snapshot reads back what was set, whatever order
// rows and columns were added in; a cell never set reads missing ("no
// sample"); a clone is written without changing the original; All yields
// every cell in row and column order.
func TestSnapshotTable(t *testing.T) {
	var s evaluator.Snapshot
	if got := s.Get("free", "p99_ratio"); got.Status != evaluator.StatusMissing || got.Reason != "no sample" {
		t.Fatalf("empty snapshot: %+v, want missing, no sample", got)
	}
	s.Set("free", "p99_ratio", evaluator.Sample{Value: 1.5})
	s.Set("paid", "p99_ratio", evaluator.Sample{Value: 1.1})
	// A column added after rows: the table is laid out again.
	s.Set("free", "hard_fail_ratio", evaluator.Sample{Status: evaluator.StatusError, Reason: "timeout"})
	s.Set("paid", "hard_fail_ratio", evaluator.Sample{Value: 0.01, Volume: 300, Counted: true})
	c := s.Clone()
	c.Set("free", "p99_ratio", evaluator.Sample{Value: 9})
	c.Set("spare", "quota_remaining", evaluator.Sample{Value: 0.5, Reason: "clone only"})

	want := []string{
		"free/p99_ratio {Value:1.5 Volume:0 Reason: Status:ok Counted:false}",
		"free/hard_fail_ratio {Value:0 Volume:0 Reason:timeout Status:error Counted:false}",
		"paid/p99_ratio {Value:1.1 Volume:0 Reason: Status:ok Counted:false}",
		"paid/hard_fail_ratio {Value:0.01 Volume:300 Reason: Status:ok Counted:true}",
	}
	var got []string
	for cell, smp := range s.All() {
		got = append(got, fmt.Sprintf("%s/%s %+v", cell[0], cell[1], smp))
	}
	if !slices.Equal(got, want) {
		t.Errorf("All:\n%q\nwant\n%q", got, want)
	}
	if got := c.Get("free", "p99_ratio").Value; got != 9 {
		t.Errorf("clone's free/p99_ratio = %g, want 9", got)
	}
	if got := c.Get("spare", "p99_ratio"); got.Status != evaluator.StatusMissing || got.Reason != "no sample" {
		t.Errorf("clone's new row, a signal never set: %+v, want missing, no sample", got)
	}
	if got := c.Get("paid", "quota_remaining"); got.Status != evaluator.StatusMissing || got.Reason != "no sample" {
		t.Errorf("clone's new column, a route never set: %+v, want missing, no sample", got)
	}
	if slices.Contains(s.Routes(), "spare") || slices.Contains(s.Signals(), "quota_remaining") || s.Get("free", "p99_ratio").Value != 1.5 {
		t.Errorf("writing the clone changed the original: routes %q, signals %q", s.Routes(), s.Signals())
	}
	if got := c.Get("spare", "quota_remaining").Reason; got != "clone only" {
		t.Errorf("clone's reason %q, want %q", got, "clone only")
	}
}

// TestSnapshotLayoutsScoreAlike steps one run on snapshots laid out in
// the policy's order and another on the same samples in shuffled rows and
// columns, with rows and columns the policy does not have, cells left
// unset and reasons interned in another order: both give the same events
// and states at every tick.
func TestSnapshotLayoutsScoreAlike(t *testing.T) {
	p := testenv.DefaultPolicy(t, mixedFleet)
	rng := rand.New(rand.NewPCG(7, 7))
	now := time.Unix(1_700_000_000, 0)
	var ordered, shuffled evaluator.State
	for tick := 0; tick < 200; {
		kind, n := rng.IntN(6), 1+rng.IntN(20)
		snap := mixedSnapshot(p, kind, now)
		for range n {
			now = now.Add(15 * time.Second)
			snap.Time = now
			other := shuffledLike(rng, snap)
			var evsO, evsS []evaluator.Event
			ordered, evsO = evaluator.Step(p, ordered, evaluator.Input{Snapshot: snap}, now)
			shuffled, evsS = evaluator.Step(p, shuffled, evaluator.Input{Snapshot: other}, now)
			if a, b := jsonOf(t, evsO), jsonOf(t, evsS); a != b {
				t.Fatalf("tick %d (kind %d): events differ\nordered:  %s\nshuffled: %s", tick, kind, a, b)
			}
			if a, b := evaluator.StateText(ordered), evaluator.StateText(shuffled); a != b {
				t.Fatalf("tick %d (kind %d): states differ\nordered:  %s\nshuffled: %s", tick, kind, a, b)
			}
			tick++
		}
	}
}

// shuffledLike is snap's samples in a table of its routes and signals
// shuffled, plus a route and a signal of its own; a cell that reads "no
// sample" is left unset, and a decoy reason is interned first.
func shuffledLike(rng *rand.Rand, snap evaluator.Snapshot) evaluator.Snapshot {
	routes := append(slices.Clone(snap.Routes()), "ghost")
	signals := append(slices.Clone(snap.Signals()), "nosuch")
	rng.Shuffle(len(routes), func(i, j int) { routes[i], routes[j] = routes[j], routes[i] })
	rng.Shuffle(len(signals), func(i, j int) { signals[i], signals[j] = signals[j], signals[i] })
	out := evaluator.NewSnapshot(snap.Time, routes, signals)
	out.Actuators = snap.Actuators
	out.Set("ghost", "nosuch", evaluator.Sample{Status: evaluator.StatusError, Reason: fmt.Sprint("decoy ", rng.IntN(3))})
	for i, r := range routes {
		for j, sig := range signals {
			if smp := snap.Get(r, sig); smp.Reason != "no sample" {
				out.SetCell(i, j, smp)
			}
		}
	}
	return out
}

// TestSnapshotReasonsCompareByText: a signal whose error reason changes
// between ticks gets the new reason, though each table holds its one
// reason at the same place.
func TestSnapshotReasonsCompareByText(t *testing.T) {
	p := testenv.DefaultPolicy(t)
	now := time.Unix(1_700_000_000, 0)
	var s evaluator.State
	for _, reason := range []string{"timeout", "bad_data", "bad_data", "timeout"} {
		now = now.Add(15 * time.Second)
		snap := testenv.Healthy(p, now)
		snap.Set("free", "hard_fail_ratio", evaluator.Sample{Status: evaluator.StatusError, Reason: reason})
		s, _ = evaluator.Step(p, s, evaluator.Input{Snapshot: snap}, now)
		if got := contribution(t, s, "free", "hard_fail_ratio").Reason; got != reason {
			t.Fatalf("reason %q, want %q", got, reason)
		}
	}
}

// TestSnapshotWrittenAfterStep: a snapshot written after a Step scored it
// is a new one for the next Step, never the samples the state kept: the
// route's score follows the new value.
func TestSnapshotWrittenAfterStep(t *testing.T) {
	p := testenv.DefaultPolicy(t)
	now := time.Unix(1_700_000_000, 0)
	snap := testenv.Healthy(p, now)
	var s evaluator.State
	for _, v := range []float64{0.01, 0.4, 0.4, 0.02} {
		now = now.Add(15 * time.Second)
		snap.Set("free", "hard_fail_ratio", evaluator.Sample{Value: v})
		s, _ = evaluator.Step(p, s, evaluator.Input{Snapshot: snap}, now)
		if got := contribution(t, s, "free", "hard_fail_ratio").Value; got != v {
			t.Fatalf("hard_fail_ratio scored at %g, want %g", got, v)
		}
	}
}

// contribution is signal's contribution to route's score in s.
func contribution(t *testing.T, s evaluator.State, route, signal string) evaluator.Contribution {
	t.Helper()
	for _, c := range s.Routes[route].Score.Contributions {
		if c.Signal == signal {
			return c
		}
	}
	t.Fatalf("%s has no contribution of %s", route, signal)
	return evaluator.Contribution{}
}
