package evaluator_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules/config"
)

// mixedFleet is a fleet of 12 services of 3 routes, one route shared by two
// services, with an actuator.
func mixedFleet(cfg *config.Config) {
	testenv.Fleet(36)(cfg)
	cfg.Services[1].Routes = append(cfg.Services[1].Routes, cfg.Services[0].Routes[2])
	cfg.Actuators = []config.ActuatorConfig{{Name: "split", Type: "file"}}
}

// mixedSnapshot is one of a few kinds of tick, chosen by kind: calm,
// degraded, failing, blind (signals missing or in error), counted (ratios
// with their volumes) and -0 values.
func mixedSnapshot(p *evaluator.Policy, kind int, now time.Time) evaluator.Snapshot {
	snap := evaluator.Snapshot{Time: now, Actuators: map[string]evaluator.ActuatorHealth{"split": {OK: true}}}
	for i, r := range p.Routes() {
		for _, sig := range p.Config.Signals {
			smp := evaluator.Sample{Value: testenv.HealthyValues[sig.Name]}
			switch {
			case kind == 1 && i%3 == 0 && sig.Name == "soft_fail_ratio":
				smp.Value = 0.12
			case kind == 2 && i%2 == 0 && sig.Name == "hard_fail_ratio":
				smp.Value = 0.5
			case kind == 2 && i%5 == 0 && sig.Name == "error_body_ratio":
				smp.Value = 0.2
			case kind == 3 && i%4 == 0 && sig.Name == "p99_ratio":
				continue // missing
			case kind == 3 && i%4 == 1 && sig.Name == "hard_fail_ratio":
				smp = evaluator.Sample{Status: evaluator.StatusError, Reason: "query failed"}
			case kind == 4 && sig.Volume != "":
				smp.Volume, smp.Counted = 300, true
				if i%3 == 0 && sig.Name == "soft_fail_ratio" {
					smp.Value = 0.3
				}
			case kind == 5 && sig.Name == "empty_ratio":
				smp.Value = math.Copysign(0, float64(i%2)-0.5) // -0 and 0 print differently
			}
			snap.Set(r, sig.Name, smp)
		}
	}
	if kind == 2 {
		snap.Actuators["split"] = evaluator.ActuatorHealth{FailingSince: now.Add(-time.Minute), Error: "write failed"}
	}
	return snap
}

// TestStepNeverWritesItsInputs runs ticks of every kind, with commands
// and drills now and then, and wants the state and the snapshot given to
// each Step unchanged after it: Step replaces what changes, so a caller
// may keep the last state (the live loop's status page does) and a
// snapshot (a backtest's drill overlay starts from it).
func TestStepNeverWritesItsInputs(t *testing.T) {
	p := testenv.DefaultPolicy(t, mixedFleet)
	rng := rand.New(rand.NewPCG(13, 13))
	now := time.Unix(1_700_000_000, 0)
	var s evaluator.State
	for tick := 0; tick < 400; {
		kind, n := rng.IntN(6), 1+rng.IntN(30)
		snap := mixedSnapshot(p, kind, now)
		for range n {
			now = now.Add(15 * time.Second)
			in := evaluator.Input{Snapshot: snap}
			switch rng.IntN(40) {
			case 0:
				in.Commands = []evaluator.Command{{Kind: evaluator.CommandPause, Service: "svc1", Reason: "drill", Expires: now.Add(2 * time.Minute)}}
			case 1, 2:
				// A drill, real or dry run, on a route of svc2: its alerts
				// say drill, and a dry run's end puts the route back.
				r := p.Config.Services[2].Routes[rng.IntN(3)]
				in.Commands = []evaluator.Command{{Kind: evaluator.CommandDrill, Route: r, Reason: "step", DryRun: rng.IntN(2) == 0,
					Signals: map[string]float64{"hard_fail_ratio": 0.5}, Expires: now.Add(time.Duration(1+rng.IntN(8)) * time.Minute)}}
			}
			prev, prevText, snapText := s, evaluator.StateText(s), jsonOf(t, snapCells(snap))
			s, _ = evaluator.Step(p, s, in, now)
			if evaluator.StateText(prev) != prevText {
				t.Fatalf("tick %d: Step changed the state it was given (commands %+v, drills %d)", tick, in.Commands, len(prev.Drills))
			}
			if jsonOf(t, snapCells(snap)) != snapText {
				t.Fatalf("tick %d: Step changed the snapshot it was given (drills %d)", tick, len(s.Drills))
			}
			tick++
		}
	}
}

// snapCells is every cell of snap, as text.
func snapCells(snap evaluator.Snapshot) []string {
	var out []string
	for k, smp := range snap.All() {
		out = append(out, k[0]+"/"+k[1]+": "+fmt.Sprintf("%+v", smp))
	}
	return out
}

func jsonOf(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
