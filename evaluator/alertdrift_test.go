package evaluator

import (
	"testing"
	"time"
)

// TestThroughputDriftIgnoresRoutesWithoutTraffic: HermesThroughputDrift
// of the shipped policy tells of a route that lost its callers, not of one
// Hermes or a person sends nothing. The backup after a completed
// failback, and the routes a pin leaves out, serve none by design (their
// throughput_ratio falls to 0 an hour after they carried the service);
// before, the alert fired on them after every failback and pin. A route
// with a share that serves under half does raise it.
func TestThroughputDriftIgnoresRoutesWithoutTraffic(t *testing.T) {
	p := policyWithActuator(t)
	now := time.Unix(0, 0).UTC()
	var s State
	over := map[string]any{}
	fired := map[string]bool{}
	run := func(d time.Duration) {
		t.Helper()
		for end := now.Add(d); now.Before(end); {
			now = now.Add(15 * time.Second)
			var evs []Event
			s, evs = Step(p, s, Input{Snapshot: snap(p, now, over)}, now)
			for _, e := range evs {
				if e.Type == EventAlert && e.Name == "HermesThroughputDrift" && e.State == "firing" {
					fired[e.Route] = true
				}
			}
		}
	}
	// Fail over free, then heal it: the failback completes and
	// paid-standard, the backup, goes back to 0 %.
	over["free.hard_fail_ratio"], over["free.probe_success"] = 0.5, 0.0
	run(time.Minute)
	over["free.hard_fail_ratio"], over["free.probe_success"] = 0.0002, 1.0
	run(75 * time.Minute)
	if rs := s.Routes["free"]; rs.Level.String() != "normal" {
		t.Fatalf("free is %s stage %d, want its failback complete", rs.Level, rs.Stage)
	}
	if w := s.Services["chat"].Weights["paid-standard"]; w != 0 {
		t.Fatalf("paid-standard has %d %% after the failback", w)
	}
	over["paid-standard.throughput_ratio"] = 0.0
	run(20 * time.Minute)
	if fired["paid-standard"] {
		t.Error("HermesThroughputDrift fired on the backup after a completed failback")
	}

	// A pin to paid-premium: free and paid-standard get nothing.
	var err error
	if s, _, err = Apply(p, s, Command{Kind: "pin", Service: "chat", Route: "paid-premium", Reason: "test"}, now); err != nil {
		t.Fatal(err)
	}
	over["free.throughput_ratio"] = 0.0
	run(20 * time.Minute)
	if fired["free"] || fired["paid-standard"] {
		t.Errorf("HermesThroughputDrift fired on a route a pin leaves out: %v", fired)
	}

	// The pinned route, which has the whole share, loses its callers.
	over["paid-premium.throughput_ratio"] = 0.3
	run(20 * time.Minute)
	if !fired["paid-premium"] {
		t.Error("HermesThroughputDrift did not fire on a route with a share that serves under half of an hour ago")
	}
}
