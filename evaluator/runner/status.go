package runner

import (
	"maps"
	"sort"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
)

// Status is everything an operator needs at a glance; /api/v1/status serves
// it as JSON and / renders it as HTML.
type Status struct {
	Ready      bool              `json:"ready"`
	LastTick   time.Time         `json:"last_tick,omitzero"`
	Interval   string            `json:"evaluation_interval"`
	ConfigFile string            `json:"config_file"`
	LoadedAt   time.Time         `json:"config_loaded_at"`
	Services   []ServiceStatus   `json:"services"`
	Alerts     []AlertStatus     `json:"alerts"`
	Actuators  []ActuationStatus `json:"actuators"`
}

// ServiceStatus is one service: its split, flags, override and routes.
type ServiceStatus struct {
	Name           string              `json:"name"`
	Weights        map[string]int      `json:"weights"`
	Degraded       bool                `json:"degraded"`
	RetriesEnabled bool                `json:"retries_enabled"`
	Override       *evaluator.Override `json:"override,omitempty"`
	Routes         []RouteStatus       `json:"routes"`
}

// RouteStatus is one route of a service.
type RouteStatus struct {
	Name            string                   `json:"name"`
	Score           float64                  `json:"score"`
	Level           string                   `json:"level"`
	Since           time.Time                `json:"since"`
	FailbackStage   int                      `json:"failback_stage"`
	FailbackPercent int                      `json:"failback_percent,omitempty"`
	StageSince      time.Time                `json:"stage_since,omitzero"`
	NextFailback    time.Time                `json:"next_failback_allowed,omitzero"`
	Released        bool                     `json:"released,omitempty"`
	Traffic         int                      `json:"traffic_percent"`
	Contributions   []evaluator.Contribution `json:"contributions"`
	Missing         []string                 `json:"missing,omitempty"`
	Reasons         []string                 `json:"reasons"`
}

// AlertStatus is a pending or firing alert.
type AlertStatus struct {
	Name     string            `json:"name"`
	Tier     string            `json:"tier"`
	State    string            `json:"state"`
	Service  string            `json:"service"`
	Route    string            `json:"route,omitempty"`
	ActiveAt time.Time         `json:"active_at"`
	Summary  string            `json:"summary,omitempty"`
	Labels   map[string]string `json:"labels"`
}

// Status returns a consistent copy of the current state.
func (r *Runner) Status() Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	st := Status{Ready: r.ready.Load(), LastTick: r.lastTick, Interval: r.cfg.Global.EvaluationInterval.String(),
		ConfigFile: r.opts.ConfigPath, LoadedAt: r.loadedAt, Services: []ServiceStatus{}, Alerts: []AlertStatus{}, Actuators: []ActuationStatus{}}
	for _, svc := range r.cfg.Services {
		ss := ServiceStatus{Name: svc.Name, Weights: map[string]int{}}
		if cur := r.state.Services[svc.Name]; cur != nil {
			ss.Weights, ss.Degraded, ss.RetriesEnabled = cur.Weights, cur.Degraded, cur.RetriesEnabled
		}
		if o, ok := r.state.Overrides[svc.Name]; ok {
			ss.Override = &o
		}
		for _, name := range svc.Routes {
			rs := r.state.Routes[name]
			if rs == nil {
				ss.Routes = append(ss.Routes, RouteStatus{Name: name, Level: "unknown", Reasons: []string{"not evaluated yet"}})
				continue
			}
			rt := RouteStatus{Name: name, Score: rs.Score.Value, Level: rs.Level.String(), Since: rs.Since,
				FailbackStage: rs.Stage, Released: rs.Released, Traffic: ss.Weights[name],
				Contributions: rs.Score.Contributions, Missing: rs.Score.Missing, Reasons: rs.Score.Reasons()}
			if rt.Reasons == nil {
				rt.Reasons = []string{}
			}
			if rs.Stage > 0 {
				rt.FailbackPercent = r.cfg.Failback.Stages[rs.Stage-1]
				rt.StageSince = rs.StageSince
			}
			if rs.Level == evaluator.Failover && rs.Stage == 0 {
				rt.NextFailback = evaluator.NextFailbackAllowed(r.pol, *rs)
			}
			ss.Routes = append(ss.Routes, rt)
		}
		st.Services = append(st.Services, ss)
	}
	all := maps.Clone(r.state.Alerts)
	if all == nil {
		all = map[string]*evaluator.AlertState{}
	}
	maps.Copy(all, r.actAlerts)
	for _, a := range all {
		if a.Status == evaluator.AlertInactive {
			continue
		}
		st.Alerts = append(st.Alerts, AlertStatus{Name: a.Rule, Tier: a.Tier, State: a.Status.String(), Service: a.Service,
			Route: a.Route, ActiveAt: a.ActiveAt, Summary: a.Annotations["summary"], Labels: a.Labels})
	}
	sort.Slice(st.Alerts, func(i, j int) bool {
		a, b := st.Alerts[i], st.Alerts[j]
		if a.Tier != b.Tier {
			return a.Tier < b.Tier
		}
		return a.Name+a.Service+a.Route < b.Name+b.Service+b.Route
	})
	for _, a := range r.lastActs {
		st.Actuators = append(st.Actuators, a)
	}
	sort.Slice(st.Actuators, func(i, j int) bool { return st.Actuators[i].Actuator < st.Actuators[j].Actuator })
	return st
}
