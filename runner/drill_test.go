package runner

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/runner/auditlog"
)

// newDrillRunner is a runner on the shipped policy (15 s ticks, the
// shipped dwells) with a file actuator at split, its audit log in audit
// and its overrides file in dir, so a second runner on dir is a restart.
func newDrillRunner(t *testing.T, fp *fakeProm, dir string, audit *testenv.Buffer) (*Runner, string) {
	t.Helper()
	return newFileRunner(t, fp, dir, Options{Audit: auditlog.New(audit)})
}

// auditEvents decodes the core's events of an audit log.
func auditEvents(t *testing.T, log string) []evaluator.Event {
	t.Helper()
	var evs []evaluator.Event
	for _, line := range strings.Split(strings.TrimSpace(log), "\n") {
		var e evaluator.Event
		if err := json.Unmarshal([]byte(line), &e); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		evs = append(evs, e)
	}
	return evs
}

// drillPhases returns when each phase of route's drill was audited.
func drillPhases(t *testing.T, evs []evaluator.Event, route string) map[string]time.Time {
	t.Helper()
	at := map[string]time.Time{}
	for _, e := range evs {
		if e.Type != evaluator.EventDrill || e.Route != route {
			continue
		}
		if _, dup := at[e.State]; dup {
			t.Errorf("drill phase %s audited twice", e.State)
		}
		at[e.State] = e.Time
	}
	return at
}

// TestDrillAgainstTheLiveLoop runs an error-ratio drill through the live
// runner on the shipped policy: the command is queued and applied by the
// next tick, the fault moves traffic on the real file actuator, the
// recorded times are audited in order, the alerts carry drill="true", and
// the drill ends by itself.
func TestDrillAgainstTheLiveLoop(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.02}
		audit := &testenv.Buffer{}
		r, split := newDrillRunner(t, fp, t.TempDir(), audit)
		start(t, r)
		time.Sleep(20 * time.Second)
		synctest.Wait()
		drill := evaluator.Command{Kind: evaluator.CommandDrill, Route: "free", Signals: map[string]float64{"error_body_ratio": 0.4},
			Reason: "game day", By: "alice", Expires: time.Now().Add(10 * time.Minute)}
		bad := drill
		bad.Signals = map[string]float64{"no_such_signal": 1}
		if _, err := r.Submit(context.Background(), bad); err == nil || !strings.Contains(err.Error(), `unknown signal "no_such_signal"`) {
			t.Errorf("drill of an unknown signal: %v", err)
		}
		res, err := r.Submit(context.Background(), drill)
		if err != nil || !res.Applied {
			t.Fatalf("drill: %+v %v", res, err)
		}
		injected := res.Tick
		if st := status(r); len(st.Drills) != 1 || st.Drills[0].Route != "free" {
			t.Errorf("status drills %+v", st.Drills)
		}
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		if w := weights(t, split); w["free"] != 0 {
			t.Errorf("split during the drill %v: the actuator did not act", w)
		}

		time.Sleep(6 * time.Minute) // past the drill's end
		synctest.Wait()
		evs := auditEvents(t, audit.String())
		at := drillPhases(t, evs, "free")
		testenv.CheckDrillPhases(t, at)
		if !at[evaluator.DrillStarted].Equal(injected) {
			t.Errorf("injection audited at %s, the command's tick was %s", at[evaluator.DrillStarted], injected)
		}
		if !at[evaluator.DrillFailedOver].After(injected) {
			t.Errorf("failover at injection (%s): an error-ratio drill must wait out the dwell", at[evaluator.DrillFailedOver])
		}
		if want := injected.Add(10 * time.Minute); !at[evaluator.DrillEnded].Equal(want) {
			t.Errorf("drill ended at %s, want at its end %s", at[evaluator.DrillEnded], want)
		}
		var paged bool
		for _, e := range evs {
			if e.Type == evaluator.EventDrill && (e.Drill == nil || e.Drill.Kind != "error_body_ratio=0.4" || !e.Drill.Injected.Equal(injected)) {
				t.Errorf("drill event %s without its drill: %+v", e.State, e.Drill)
			}
			if e.Type != evaluator.EventAlert || e.Route != "free" || e.State != "firing" {
				continue
			}
			if e.Labels["drill"] != "true" {
				t.Errorf("alert %s raised under the drill lacks drill=\"true\": %v", e.Name, e.Labels)
			}
			paged = paged || e.Name == "HermesRouteFailedOver"
		}
		if !paged {
			t.Error("no HermesRouteFailedOver alert during the drill")
		}
		if st := status(r); len(st.Drills) != 0 {
			t.Errorf("drill still running after its end: %+v", st.Drills)
		}
	})
}

// TestDryRunDrillLeavesTheActuator runs a dry-run drill that fails a route
// over in the core, with a restart in the middle: the actuator's file keeps
// the split from before the drill throughout, the planned split is audited
// as "would", the drill survives the restart and ends by itself, and the
// route is back at its level from before the drill.
func TestDryRunDrillLeavesTheActuator(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.02}
		audit := &testenv.Buffer{}
		dir := t.TempDir()
		r, split := newDrillRunner(t, fp, dir, audit)
		stop := start(t, r)
		time.Sleep(20 * time.Second)
		synctest.Wait()
		before, err := os.ReadFile(split)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := r.Submit(context.Background(), evaluator.Command{Kind: evaluator.CommandDrill, Route: "free", DryRun: true,
			Signals: map[string]float64{"quota_remaining": 0.01}, Reason: "rehearsal", Expires: time.Now().Add(5 * time.Minute)}); err != nil {
			t.Fatal(err)
		}
		unchanged := func(when string) {
			t.Helper()
			after, err := os.ReadFile(split)
			if err != nil {
				t.Fatal(err)
			}
			if string(after) != string(before) {
				t.Errorf("%s: the dry-run drill changed the actuator's file:\nbefore %s\nafter  %s", when, before, after)
			}
		}
		time.Sleep(time.Minute)
		synctest.Wait()
		if lvl := status(r).Services[0].Routes[0].Level; lvl != "failover" {
			t.Fatalf("free is %s under a dry-run quota drill, want failover in the core", lvl)
		}
		unchanged("during the drill")
		if !strings.Contains(audit.String(), `"result":"would"`) {
			t.Errorf("no \"would\" actuation audited:\n%s", audit.String())
		}
		stop()

		r2, _ := newDrillRunner(t, fp, dir, audit)
		start(t, r2)
		time.Sleep(time.Minute)
		synctest.Wait()
		if st := status(r2); len(st.Drills) != 1 || !st.Drills[0].DryRun {
			t.Fatalf("drill after a restart: %+v", st.Drills)
		}
		unchanged("after a restart during the drill")
		time.Sleep(4 * time.Minute) // past the drill's end
		synctest.Wait()
		st := status(r2)
		if len(st.Drills) != 0 {
			t.Errorf("drill still running after its end: %+v", st.Drills)
		}
		if lvl := st.Services[0].Routes[0].Level; lvl != "normal" {
			t.Errorf("free is %s after the dry-run drill, want normal as before it", lvl)
		}
		unchanged("after the drill")
		if at := drillPhases(t, auditEvents(t, audit.String()), "free"); at[evaluator.DrillEnded].IsZero() || at[evaluator.DrillFailedOver].IsZero() {
			t.Errorf("dry-run drill phases %v", at)
		}
	})
}
