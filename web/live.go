package web

import (
	"maps"
	"slices"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/runner"
	"github.com/hermes-failover/hermes/traffic"
	"github.com/hermes-failover/hermes/web/api"
)

// Live serves the live loop r: it is the Loop of `hermes run`, with the
// status built from r's View.
func Live(r *runner.Runner) Loop { return live{r} }

type live struct{ *runner.Runner }

func (l live) Status() api.Status { return StatusOf(l.View()) }

// StatusOf builds the status API's answer from a view of the live loop.
func StatusOf(v runner.View) api.Status {
	st := api.Status{Ready: v.Ready, Ticked: v.Ticked, LastTick: v.LastTick, Interval: v.Config.Global.EvaluationInterval.String(),
		ConfigFile: v.ConfigFile, LoadedAt: v.LoadedAt, Services: []api.Service{}, Alerts: []api.Alert{}, Actuators: []api.Actuator{}}
	for _, l := range v.Config.Levels {
		st.Levels = append(st.Levels, api.Level{Name: l.Name, Below: l.Below})
	}
	for _, svc := range v.Config.Services {
		st.Services = append(st.Services, serviceOf(v, svc.Name, svc.Routes))
	}
	for _, route := range slices.Sorted(maps.Keys(v.State.Drills)) {
		st.Drills = append(st.Drills, v.State.Drills[route])
	}
	for _, a := range v.ActiveAlerts() {
		ann := a.Text()
		st.Alerts = append(st.Alerts, api.Alert{Name: a.Rule, Tier: a.Tier, State: a.State.String(), Service: a.Service,
			Route: a.Route, Actuator: a.Actuator, ActiveAt: a.ActiveAt, Summary: ann["summary"], Runbook: ann["runbook_url"], Labels: a.Labels})
	}
	for _, a := range v.Actuators {
		st.Actuators = append(st.Actuators, api.Actuator{Actuator: a.Actuator, At: a.At, OK: a.OK, Error: a.Error, FailingSince: a.FailingSince})
	}
	if v.Config != nil {
		st.Problems = problemWords(v.SignalProblems, len(v.Config.Signals))
	}
	for _, p := range v.SignalProblems {
		st.QueryErrors = append(st.QueryErrors, api.QueryError{Signal: p.Signal, Reason: p.Reason, Detail: p.Detail, Routes: p.Routes})
	}
	for _, e := range v.AlertErrors {
		st.AlertErrors = append(st.AlertErrors, api.AlertError{Alert: e.Alert, Service: e.Service, Route: e.Route, Error: e.Error,
			At: e.At, Since: e.Since, Count: e.Count, Failing: e.At.Equal(v.LastTick)})
	}
	if f := v.ReloadFailure; f != nil {
		st.ReloadFailure = &api.ReloadFailure{At: f.At, Since: f.Since, Count: f.Count, Error: f.Error}
	}
	st.Candidate = candidateOf(v)
	return st
}

// notEvaluated is the level the status API gives a route no tick judged.
const notEvaluated = "unknown"

func serviceOf(v runner.View, name string, routes []string) api.Service {
	ss := api.Service{Name: name, Weights: map[string]int{}}
	if cur := v.State.Services[name]; cur != nil {
		ss.Weights, ss.Degraded, ss.RetriesEnabled = cur.Weights, cur.Degraded, cur.RetriesEnabled
		// A dry-run drill plans a split the actuators never apply: the
		// service shows the one they keep, and the plan apart.
		if kept, ok := v.State.DryRunHold(name); ok {
			ss.Weights, ss.Planned = kept.Weights, cur.Weights
		}
	}
	if o, ok := v.State.Overrides[name]; ok {
		ss.Override = &o
	}
	// An unknown split is the core's placeholder (the first route at
	// 100 %), which Hermes does not write: it is not shown as a split.
	if ss.SplitUnknown = v.SplitUnknown(name); ss.SplitUnknown {
		ss.Weights, ss.Planned = map[string]int{}, nil
	} else {
		ss.SplitUnknownAfterOverride = v.UnknownSplits[name]
	}
	// A split Hermes does not know is never written (the actuation stage
	// holds it), also before the first tick has said so.
	if why, ok := v.Held[name]; ok || ss.SplitUnknown {
		if ss.SplitUnknown {
			why = runner.HeldUnknownSplit
		}
		ss.Held = &api.Hold{Reason: why, Why: heldWords(why, name)}
	}
	probs := map[string]runner.SignalProblem{}
	for _, p := range v.SignalProblems {
		if _, ok := probs[p.Signal]; !ok {
			probs[p.Signal] = p
		}
	}
	for _, route := range routes {
		rs := v.State.Routes[route]
		if rs == nil {
			ss.Routes = append(ss.Routes, api.Route{Name: route, Level: notEvaluated, Reasons: []string{"not evaluated yet"},
				ScoreState: api.ScoreNotJudged, State: []string{"not evaluated yet"}})
			continue
		}
		rt := api.Route{Name: route, Score: rs.Score.Value, Level: rs.Level.String(), Since: rs.Since,
			FailbackStage: rs.Stage, Released: rs.Released, Traffic: ss.Weights[route],
			Contributions: api.ContributionsOf(rs.Score.Contributions), Missing: rs.Score.Missing, Reasons: routeReasons(rs.Score, probs),
			Placement:  evaluator.Placement(v.Policy, *rs, v.LastTick),
			ScoreState: scoreState(rs.Score), State: routeState(v.Policy, *rs, v.LastTick, probs),
			WaitsFor: waitsFor(v.Policy, *rs, v.LastTick), Moved: rs.Move.String()}
		if rt.State == nil {
			rt.State = []string{}
		}
		if rs.Stage > 0 {
			rt.FailbackPercent = v.Config.Failback.Stages[rs.Stage-1]
			rt.StageSince = rs.StageSince
		}
		if rs.Level == traffic.Failover && rs.Stage == 0 {
			rt.NextFailback = evaluator.NextFailbackAllowed(v.Policy, *rs)
		}
		ss.Routes = append(ss.Routes, rt)
	}
	return ss
}
