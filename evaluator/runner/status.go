package runner

import (
	"maps"
	"slices"
	"sort"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/evaluator/traffic"
	"github.com/hermes-failover/hermes/web/api"
)

// Status returns a consistent copy of the current state, as the status API
// serves it.
func (r *Runner) Status() api.Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := api.Status{Ready: r.ready.Load(), Ticked: r.ticked.Load(), LastTick: r.lastTick, Interval: r.cfg.Global.EvaluationInterval.String(),
		ConfigFile: r.opts.ConfigPath, LoadedAt: r.loadedAt, Services: []api.Service{}, Alerts: []api.Alert{}, Actuators: []api.Actuator{}}
	for _, l := range r.cfg.Levels {
		st.Levels = append(st.Levels, api.Level{Name: l.Name, Below: l.Below})
	}
	for _, svc := range r.cfg.Services {
		ss := api.Service{Name: svc.Name, Weights: map[string]int{}}
		if cur := r.state.Services[svc.Name]; cur != nil {
			ss.Weights, ss.Degraded, ss.RetriesEnabled = cur.Weights, cur.Degraded, cur.RetriesEnabled
		}
		if o, ok := r.state.Overrides[svc.Name]; ok {
			ss.Override = &o
		}
		for _, name := range svc.Routes {
			rs := r.state.Routes[name]
			if rs == nil {
				ss.Routes = append(ss.Routes, api.Route{Name: name, Level: "unknown", Reasons: []string{"not evaluated yet"}})
				continue
			}
			rt := api.Route{Name: name, Score: rs.Score.Value, Level: rs.Level.String(), Since: rs.Since,
				FailbackStage: rs.Stage, Released: rs.Released, Traffic: ss.Weights[name],
				Contributions: rs.Score.Contributions, Missing: rs.Score.Missing, Reasons: rs.Score.Reasons(),
				Placement: evaluator.Placement(r.pol, *rs, r.lastTick)}
			if rt.Reasons == nil {
				rt.Reasons = []string{}
			}
			if rs.Stage > 0 {
				rt.FailbackPercent = r.cfg.Failback.Stages[rs.Stage-1]
				rt.StageSince = rs.StageSince
			}
			if rs.Level == traffic.Failover && rs.Stage == 0 {
				rt.NextFailback = evaluator.NextFailbackAllowed(r.pol, *rs)
			}
			ss.Routes = append(ss.Routes, rt)
		}
		st.Services = append(st.Services, ss)
	}
	for _, route := range slices.Sorted(maps.Keys(r.state.Drills)) {
		st.Drills = append(st.Drills, r.state.Drills[route])
	}
	for _, a := range r.state.Alerts {
		if !a.Active() {
			continue
		}
		st.Alerts = append(st.Alerts, api.Alert{Name: a.Rule, Tier: a.Tier, State: a.State.String(), Service: a.Service,
			Route: a.Route, Actuator: a.Actuator, ActiveAt: a.ActiveAt, Summary: a.Annotations["summary"], Runbook: a.Annotations["runbook_url"], Labels: a.Labels})
	}
	sort.Slice(st.Alerts, func(i, j int) bool {
		a, b := st.Alerts[i], st.Alerts[j]
		if a.Tier != b.Tier {
			return a.Tier < b.Tier
		}
		return a.Name+a.Service+a.Route+a.Actuator < b.Name+b.Service+b.Route+b.Actuator
	})
	for _, a := range r.lastActs {
		st.Actuators = append(st.Actuators, a)
	}
	sort.Slice(st.Actuators, func(i, j int) bool { return st.Actuators[i].Actuator < st.Actuators[j].Actuator })
	return st
}
