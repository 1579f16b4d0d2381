package actuation

import (
	"testing"
	"time"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/traffic"
)

// TestOwnStampGoesOnAfterTheClockWentBack: a replica whose clock went
// back (a wall-clock jump, or a restart after one) reads its own later
// stamp in the backend; it stamps one interval past it, so the backend
// takes the write (a relayed, older stamp is refused) and the other
// replica sees the lease renewed. Otherwise it stamps its tick.
func TestOwnStampGoesOnAfterTheClockWentBack(t *testing.T) {
	now := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	ahead := traffic.Stamp{Replica: "a", Tick: now.Add(time.Hour)}
	for _, c := range []struct {
		have traffic.Stamp
		want traffic.Stamp
	}{
		{traffic.Stamp{}, traffic.Stamp{Replica: "a", Tick: now}},
		{traffic.Stamp{Replica: "a", Tick: now.Add(-15 * time.Second)}, traffic.Stamp{Replica: "a", Tick: now}},
		{ahead, traffic.Stamp{Replica: "a", Tick: ahead.Tick.Add(15 * time.Second)}},
		{traffic.Stamp{Replica: "a", Tick: now}, traffic.Stamp{Replica: "a", Tick: now.Add(15 * time.Second)}},
		{traffic.Stamp{Replica: "b", Tick: now.Add(time.Hour)}, traffic.Stamp{Replica: "a", Tick: now}},
	} {
		got := ownStamp("a", c.have, now, 15*time.Second)
		if !got.Equal(c.want) {
			t.Errorf("ownStamp over %+v = %+v, want %+v", c.have, got, c.want)
		}
		if c.have.Replica == "a" && actuators.Relayed(got, c.have) {
			t.Errorf("ownStamp over %+v = %+v: the backend would refuse it as relayed", c.have, got)
		}
	}
}

// TestLeaseCountsTheReadersOwnTime walks leases.lease tick by tick for
// replica b reading a's stamps, whose times are an hour off b's clock:
// a stamp seen for the first time, or renewed, is a live lease; one left
// unchanged lives for four of b's intervals, by b's monotonic clock, and
// no longer, also while b withheld the service on some of those ticks
// (it still read the backend).
func TestLeaseCountsTheReadersOwnTime(t *testing.T) {
	const interval = 15 * time.Second
	l := leases{}
	now := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	aStamp := func(i int) traffic.Stamp {
		return traffic.Stamp{Replica: "a", Tick: now.Add(time.Hour + time.Duration(i)*interval)}
	}
	mine := traffic.Split{Weights: map[string]int{"free": 0, "paid": 100}}
	theirs := func(st traffic.Stamp) actuators.Splits {
		return actuators.Splits{"chat": {Weights: map[string]int{"free": 100, "paid": 0}, Writer: st}}
	}
	for _, step := range []struct {
		tick     int
		stamp    int // a's stamp the backend holds
		withheld bool
		wantLive bool
	}{
		{0, 0, false, true},  // first seen: a whole lease
		{1, 1, false, true},  // renewed
		{2, 2, false, true},  // renewed
		{3, 2, false, true},  // unchanged for one interval
		{4, 2, true, false},  // withheld: read, not written
		{5, 2, true, false},  // withheld
		{6, 2, false, false}, // unchanged for four intervals: expired, b writes
	} {
		out := actuators.Splits{"chat": mine}
		var withheld map[string]string
		if step.withheld {
			withheld = map[string]string{"chat": WithheldNoData}
		}
		disagree := l.lease("file", "b", out, theirs(aStamp(step.stamp)), withheld, nil, now.Add(time.Duration(step.tick)*interval),
			time.Duration(step.tick)*interval, interval)
		if step.withheld {
			continue
		}
		if live := len(disagree) == 1; live != step.wantLive {
			t.Errorf("tick %d, a's stamp %d: a's lease live %v, want %v", step.tick, step.stamp, live, step.wantLive)
		}
		if w := out["chat"].Writer.Replica; step.wantLive != (w == "a") {
			t.Errorf("tick %d: b writes a split stamped by %q", step.tick, w)
		}
	}
}
