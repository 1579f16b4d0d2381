package web

import (
	_ "embed"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/runner"
	"github.com/hermes-failover/hermes/web/api"
)

// candidateHTML is the status page's candidate block ({{define
// "candidate"}}), parsed with status.html.
//
//go:embed candidate.html
var candidateHTML string

// candidateOf builds the status's candidate section from the loop's view;
// nil without a candidate policy.
func candidateOf(v runner.View) *api.Candidate {
	c := v.Candidate
	if c == nil {
		return nil
	}
	out := &api.Candidate{File: c.File, LoadedAt: c.LoadedAt, Error: c.Error, SeededAt: c.SeededAt, LastTick: c.LastTick,
		Routes: []api.CandidateRoute{}, Differences: []api.CandidateDifference{}}
	if !c.LastTick.IsZero() && c.Config != nil {
		for _, svc := range c.Config.Services {
			for _, route := range svc.Routes {
				if r, ok := candidateRoute(v.State, c.State, svc.Name, route); ok {
					out.Routes = append(out.Routes, r)
				}
			}
		}
	}
	for i := len(c.Differences) - 1; i >= 0; i-- {
		d := c.Differences[i]
		out.Differences = append(out.Differences, api.CandidateDifference{Difference: d, Text: d.String()})
	}
	return out
}

// candidateRoute is route of service under both policies, ok when its
// level, failback stage or share differ.
func candidateRoute(live, cand evaluator.State, service, route string) (api.CandidateRoute, bool) {
	r := api.CandidateRoute{Service: service, Route: route, Level: notEvaluated, LiveLevel: notEvaluated}
	if rs := cand.Routes[route]; rs != nil {
		r.Level, r.Stage, r.Score = rs.Level.String(), rs.Stage, rs.Score.Value
	}
	if rs := live.Routes[route]; rs != nil {
		r.LiveLevel, r.LiveStage, r.LiveScore = rs.Level.String(), rs.Stage, rs.Score.Value
	}
	if sp := cand.Services[service]; sp != nil {
		r.Traffic = sp.Weights[route]
	}
	if sp := live.Services[service]; sp != nil {
		r.LiveTraffic = sp.Weights[route]
	}
	return r, r.Level != r.LiveLevel || r.Stage != r.LiveStage || r.Traffic != r.LiveTraffic
}
