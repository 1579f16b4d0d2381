package runner

import (
	"maps"
	"slices"
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
