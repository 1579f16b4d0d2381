package alerting

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/runner/tick"
)

// TestIncidentKeepsStartsAt: an alert that fires again while its route is
// still in the incident it first fired in is sent with its first startsAt,
// and so is its resolve; once the route was back at normal (a new
// incident), it starts anew.
func TestIncidentKeepsStartsAt(t *testing.T) {
	am := testenv.NewFakeAlertmanager(t)
	s := newSender(t, prometheus.NewRegistry(), 100, am)
	testenv.Go(t, s.Run)
	const key = "HermesRouteFailedOver/chat/free"
	tick := 15 * time.Second
	incident := t0
	inc := func(route string) time.Time {
		if route == "free" {
			return incident
		}
		return time.Time{}
	}
	sent := 0
	send := func(as *evaluator.Alert, now time.Time) time.Time {
		t.Helper()
		s.NotifyIncidents(context.Background(), one(key, as), inc, now)
		sent++
		testenv.Eventually(t, wait, "a send", func() bool { return len(am.Received()) == sent })
		return time.Time(am.Received()[sent-1].StartsAt)
	}
	if got := send(firing("HermesRouteFailedOver", "A", "free", t0, t0), t0); !got.Equal(t0) {
		t.Fatalf("first page starts %s, want %s", got, t0)
	}
	res := firing("HermesRouteFailedOver", "A", "free", t0, t0)
	res.State, res.ResolvedAt = evaluator.StateInactive, t0.Add(10*tick) // the failback starts
	send(res, res.ResolvedAt)
	again := t0.Add(20 * tick) // the failback is aborted
	if got := send(firing("HermesRouteFailedOver", "A", "free", again, again), again); !got.Equal(t0) {
		t.Errorf("the page fired again in the same incident starts %s, want the first page's %s", got, t0)
	}
	end := firing("HermesRouteFailedOver", "A", "free", again, again)
	end.State, end.ResolvedAt = evaluator.StateInactive, t0.Add(40*tick)
	incident = time.Time{} // back at normal
	if got := send(end, end.ResolvedAt); !got.Equal(t0) {
		t.Errorf("the final resolve starts %s, want the first page's %s", got, t0)
	}
	// A new incident: a new startsAt.
	later := t0.Add(2 * time.Hour)
	incident = later
	if got := send(firing("HermesRouteFailedOver", "A", "free", later, later), later); !got.Equal(later) {
		t.Errorf("the page of a new incident starts %s, want %s", got, later)
	}
}

// TestRestoredIncidentStarts: the startsAt saved before a restart are
// reconciled with the restored state, never assumed: kept for a route in
// the same incident, dropped for one back at normal or in another
// incident, and not used for an alert that fired before the saved startsAt.
func TestRestoredIncidentStarts(t *testing.T) {
	am := testenv.NewFakeAlertmanager(t)
	s := newSender(t, prometheus.NewRegistry(), 100, am)
	testenv.Go(t, s.Run)
	incidents := map[string]time.Time{"free": t0, "paid": t0.Add(time.Hour)}
	inc := func(route string) time.Time { return incidents[route] }
	saved := []tick.IncidentStart{
		{Key: "HermesRouteFailedOver/chat/free", Route: "free", Incident: t0, StartsAt: t0.Add(time.Minute)},
		{Key: "HermesRouteFailedOver/chat/paid", Route: "paid", Incident: t0, StartsAt: t0.Add(time.Minute)}, // another incident now
		{Key: "HermesRouteFailedOver/chat/gone", Route: "gone", Incident: t0, StartsAt: t0.Add(time.Minute)}, // back at normal
	}
	if n := s.RestoreIncidents(saved, inc); n != 1 {
		t.Fatalf("kept %d of the saved startsAt, want 1: %+v", n, s.IncidentStarts())
	}
	refired := t0.Add(30 * time.Minute)
	s.NotifyIncidents(context.Background(), one(saved[0].Key, firing("HermesRouteFailedOver", "A", "free", refired, refired)), inc, refired)
	testenv.Eventually(t, wait, "a send", func() bool { return len(am.Received()) == 1 })
	if got := time.Time(am.Received()[0].StartsAt); !got.Equal(saved[0].StartsAt) {
		t.Errorf("restored page starts %s, want the saved %s", got, saved[0].StartsAt)
	}
	// A saved startsAt later than the alert's firing is not believed.
	s2 := newSender(t, prometheus.NewRegistry(), 100, am)
	testenv.Go(t, s2.Run)
	s2.RestoreIncidents([]tick.IncidentStart{{Key: saved[0].Key, Route: "free", Incident: t0, StartsAt: refired.Add(time.Hour)}}, inc)
	s2.NotifyIncidents(context.Background(), one(saved[0].Key, firing("HermesRouteFailedOver", "A", "free", refired, refired)), inc, refired)
	testenv.Eventually(t, wait, "a send", func() bool { return len(am.Received()) == 2 })
	if got := time.Time(am.Received()[1].StartsAt); !got.Equal(refired) {
		t.Errorf("page with a saved startsAt after its firing starts %s, want its own %s", got, refired)
	}
}
