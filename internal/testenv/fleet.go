package testenv

import (
	"fmt"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
)

// FleetChain is how many routes each service of a Fleet has: a priority
// chain of provider × region routes, as a fleet of model routes has.
const FleetChain = 4

// Fleet is a DefaultPolicy edit that replaces the services with routes
// routes, in services of FleetChain routes named svcN with routes
// svcN-routeM (one shorter service takes the remainder).
func Fleet(routes int) func(*config.Config) {
	return func(cfg *config.Config) {
		cfg.Services = nil
		for s := 0; s*FleetChain < routes; s++ {
			svc := rules.ServiceConfig{Name: fmt.Sprintf("svc%d", s)}
			for r := 0; r < FleetChain && s*FleetChain+r < routes; r++ {
				svc.Routes = append(svc.Routes, fmt.Sprintf("svc%d-route%d", s, r))
			}
			cfg.Services = append(cfg.Services, svc)
		}
	}
}

// Degraded is a copy of snap with signal set to v for one route of p in
// every (routes 0, every, 2×every, …), the others unchanged.
func Degraded(p *evaluator.Policy, snap evaluator.Snapshot, every int, signal string, v float64) evaluator.Snapshot {
	out := snap.Clone()
	for i, r := range p.Routes() {
		if i%every == 0 {
			out.Set(r, signal, evaluator.Sample{Value: v})
		}
	}
	return out
}
