package runner

import (
	"errors"
	"maps"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
)

// testStatus is what the tests of this package read of a View, shaped as
// the status page shows it (services in configuration order, their routes
// in chain order), so that a check reads as what an operator would see.
type testStatus struct {
	Ready, Ticked      bool
	LastTick, LoadedAt time.Time
	Services           []testService
	Alerts             []testAlert
	Drills             []evaluator.Drill
	Actuators          []ActuatorOutcome
}

type testService struct {
	Weights  map[string]int
	Override *evaluator.Override
	Routes   []testRoute
}

type testRoute struct{ Name, Level string }

type testAlert struct{ Name, Tier, State string }

// status reads r's View as the tests check it.
func status(r *Runner) testStatus {
	v := r.View()
	st := testStatus{Ready: v.Ready, Ticked: v.Ticked, LastTick: v.LastTick, LoadedAt: v.LoadedAt, Actuators: v.Actuators}
	for _, svc := range v.Config.Services {
		ts := testService{Weights: map[string]int{}}
		if sp := v.State.Services[svc.Name]; sp != nil {
			ts.Weights = sp.Weights
		}
		if o, ok := v.State.Overrides[svc.Name]; ok {
			ts.Override = &o
		}
		for _, name := range svc.Routes {
			level := "unknown"
			if rs := v.State.Routes[name]; rs != nil {
				level = rs.Level.String()
			}
			ts.Routes = append(ts.Routes, testRoute{Name: name, Level: level})
		}
		st.Services = append(st.Services, ts)
	}
	for _, a := range v.ActiveAlerts() {
		st.Alerts = append(st.Alerts, testAlert{Name: a.Rule, Tier: a.Tier, State: a.State.String()})
	}
	for _, route := range slices.Sorted(maps.Keys(v.State.Drills)) {
		st.Drills = append(st.Drills, v.State.Drills[route])
	}
	return st
}

// TestViewSaysTheSplitIsUnknown: a restart that learned no split, then a
// pause and a pin while Prometheus answers 503. The view must say that
// chat's split is unknown and held while paused (its weights are the
// placeholder, free at 100 %), and known while pinned: the status page
// and the admin API read it there. (The view used to carry only the
// placeholder, which the page showed as the split.)
func TestViewSaysTheSplitIsUnknown(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.5, fail: errors.New("503 Service Unavailable")}
		r, _ := newFlakyRunner(t, fp, &flakyActuator{})
		stop := start(t, r)
		time.Sleep(20 * time.Second)
		synctest.Wait()
		if v := r.View(); !v.SplitUnknown("chat") || v.Held["chat"] != HeldUnknownSplit {
			t.Errorf("after a blind restart: split unknown %v, held %v; want unknown, held %q", v.SplitUnknown("chat"), v.Held, HeldUnknownSplit)
		}
		if _, err := r.Submit(t.Context(), evaluator.Command{Kind: evaluator.CommandPause, Service: "chat", Reason: "incident"}); err != nil {
			t.Fatal(err)
		}
		if v := r.View(); !v.SplitUnknown("chat") {
			t.Error("the view of a pause of an unknown split says the split is known")
		}
		time.Sleep(15 * time.Second)
		synctest.Wait()
		if v := r.View(); v.Held["chat"] != HeldUnknownSplit {
			t.Errorf("paused: held %v, want chat %q", v.Held, HeldUnknownSplit)
		}
		if _, err := r.Submit(t.Context(), evaluator.Command{Kind: evaluator.CommandPin, Service: "chat", Route: "paid-standard", Reason: "incident", Replace: true}); err != nil {
			t.Fatal(err)
		}
		time.Sleep(15 * time.Second)
		synctest.Wait()
		v := r.View()
		if v.SplitUnknown("chat") || !v.UnknownSplits["chat"] {
			t.Errorf("pinned: split unknown %v, unknown once the pin ends %v; want false, true", v.SplitUnknown("chat"), v.UnknownSplits["chat"])
		}
		if why, ok := v.Held["chat"]; ok {
			t.Errorf("pinned, yet held: %s", why)
		}
		stop()
	})
}
