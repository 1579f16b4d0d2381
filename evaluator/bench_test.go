package evaluator

import (
	"fmt"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/rules"
)

// benchPolicy is the default policy with services × routes routes.
func benchPolicy(b *testing.B, services, routes int) *Policy {
	b.Helper()
	cfg, err := rules.Default()
	if err != nil {
		b.Fatal(err)
	}
	cfg.Services = nil
	for s := range services {
		svc := rules.ServiceConfig{Name: fmt.Sprintf("svc%d", s)}
		for r := range routes {
			svc.Routes = append(svc.Routes, fmt.Sprintf("svc%d-route%d", s, r))
		}
		cfg.Services = append(cfg.Services, svc)
	}
	p, err := NewPolicy(cfg)
	if err != nil {
		b.Fatal(err)
	}
	return p
}

// BenchmarkStep measures one tick of the pure core: scoring, levels, plan
// and alert rules, for a growing number of routes.
func BenchmarkStep(b *testing.B) {
	for _, n := range []struct{ services, routes int }{{1, 3}, {10, 3}, {100, 3}} {
		b.Run(fmt.Sprintf("routes=%d", n.services*n.routes), func(b *testing.B) {
			p := benchPolicy(b, n.services, n.routes)
			now := time.Unix(0, 0)
			var s State
			over := map[string]any{}
			for _, r := range p.Routes()[:len(p.Routes())/3] {
				over[r+".soft_fail_ratio"] = 0.12 // a third of the routes degraded
			}
			snaps := []Snapshot{snap(p, now, nil), snap(p, now, over)}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				now = now.Add(15 * time.Second)
				s, _ = Step(p, s, Input{Snapshot: snaps[(i/40)%2]}, now)
			}
		})
	}
}

// BenchmarkComputeScore measures scoring one route.
func BenchmarkComputeScore(b *testing.B) {
	p := benchPolicy(b, 1, 3)
	sn := snap(p, time.Unix(0, 0), map[string]any{"svc0-route0.soft_fail_ratio": 0.2})
	b.ReportAllocs()
	for b.Loop() {
		_ = ComputeScore("svc0-route0", sn, p, false)
	}
}
