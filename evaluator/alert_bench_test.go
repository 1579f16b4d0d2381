package evaluator

import (
	"strconv"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
)

// BenchmarkAlerts measures one tick's alert rules alone (evalAlerts) with
// the shipped policy at 10,000 routes, one in a hundred failed over and
// one in twenty soft-failing, most without an active alert: what the
// compiled conditions cost, apart from the rest of Step.
func BenchmarkAlerts(b *testing.B) {
	p, s, routes, sn, now := alertFleet(b)
	b.ReportAllocs()
	for b.Loop() {
		evalAlerts(p, s, routes, sn, now)
	}
}

// BenchmarkAlertConditions measures the route-scope conditions alone, on
// the fleet of BenchmarkAlerts: every rule on every route's environment,
// as a tick builds it, without stepping or rendering alerts.
func BenchmarkAlertConditions(b *testing.B) {
	p, s, routes, _, now := alertFleet(b)
	svcs := p.Config.Services
	b.ReportAllocs()
	for b.Loop() {
		for si, svc := range svcs {
			for j, route := range svc.Routes {
				rs := &routes[p.serviceRoutes[si][j]]
				t := targetEnv{env: alertEnv(p, s, svc, nil, route, nil, rs, map[string]float64{}, now), route: rs, p: p, now: now}
				for _, ri := range p.scopeAlerts[rules.ScopeRoute] {
					_, _ = p.alerts[ri].cond.eval(&t)
				}
			}
		}
	}
}

// alertFleet is the fleet the alert benchmarks read: its policy, the
// state after 8 ticks, the route states by index, the last snapshot and
// time.
func alertFleet(b *testing.B) (*Policy, State, []RouteState, Snapshot, time.Time) {
	cfg, err := config.Default()
	if err != nil {
		b.Fatal(err)
	}
	cfg.Services = nil
	for s := range 2500 {
		svc := rules.ServiceConfig{Name: "svc" + strconv.Itoa(s)}
		for r := range 4 {
			svc.Routes = append(svc.Routes, svc.Name+"-route"+strconv.Itoa(r))
		}
		cfg.Services = append(cfg.Services, svc)
	}
	p, err := NewPolicy(cfg.Rules())
	if err != nil {
		b.Fatal(err)
	}
	over := map[string]any{}
	for i, r := range p.Routes() {
		switch {
		case i%100 == 0:
			over[r+".hard_fail_ratio"], over[r+".probe_success"] = 0.5, 0.0
		case i%20 == 5:
			over[r+".soft_fail_ratio"] = 0.12
		}
	}
	now := time.Unix(1e9, 0)
	var s State
	var sn Snapshot
	for range 8 {
		now = now.Add(15 * time.Second)
		sn = snap(p, now, over)
		s, _ = Step(p, s, Input{Snapshot: sn}, now)
	}
	routes := make([]RouteState, len(p.Routes()))
	for i, r := range p.Routes() {
		routes[i] = *s.Routes[r]
	}
	return p, s, routes, sn, now
}
