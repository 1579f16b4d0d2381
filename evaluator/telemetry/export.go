package telemetry

import (
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/evaluator"
)

// Update sets every state gauge from s, the state Step returned for the
// tick at now, and every signal gauge from snap, that tick's snapshot.
// Routes, services and signals that are no longer in pol (after a reload)
// lose their series. Signal samples with StatusError count as query errors,
// once per signal and reason per call, since one failed query errs for
// every route.
func (m *Metrics) Update(pol *evaluator.Policy, s evaluator.State, snap evaluator.Snapshot, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()

	m.forgetRemoved(pol)

	errs := map[[2]string]bool{}
	for _, route := range pol.Routes() {
		rs := s.Routes[route]
		if rs == nil {
			m.deleteRoute(route)
			continue
		}
		m.exportRoute(pol, route, rs, now)
		m.exportSignals(pol, route, rs, snap, errs)
		m.exportedRoutes[route] = true
	}
	for _, sig := range pol.Config.Signals {
		m.exportedSignals[sig.Name] = true
	}
	for k := range errs {
		m.queryErrors.WithLabelValues(k[0], k[1]).Inc()
	}

	for _, svc := range pol.Config.Services {
		st := s.Services[svc.Name]
		if st == nil {
			m.deleteService(svc.Name)
			continue
		}
		for _, r := range svc.Routes {
			m.trafficPercent.WithLabelValues(svc.Name, r).Set(float64(st.Weights[r]))
		}
		m.serviceDegraded.WithLabelValues(svc.Name).Set(boolValue(st.Degraded))
		m.serviceRetries.WithLabelValues(svc.Name).Set(boolValue(st.RetriesEnabled))
		m.exportedServices[svc.Name] = slices.Clone(svc.Routes)
	}
}

// forgetRemoved deletes the series of routes, services (or a service's
// routes) and signals that pol no longer has.
func (m *Metrics) forgetRemoved(pol *evaluator.Policy) {
	routes := map[string]bool{}
	for _, r := range pol.Routes() {
		routes[r] = true
	}
	for r := range m.exportedRoutes {
		if !routes[r] {
			m.deleteRoute(r)
		}
	}
	chains := map[string][]string{}
	for _, svc := range pol.Config.Services {
		chains[svc.Name] = svc.Routes
	}
	for name, old := range m.exportedServices {
		chain, ok := chains[name]
		if !ok {
			m.deleteService(name)
			continue
		}
		for _, r := range old {
			if !slices.Contains(chain, r) {
				m.trafficPercent.DeleteLabelValues(name, r)
			}
		}
	}
	signals := map[string]bool{}
	for _, sig := range pol.Config.Signals {
		signals[sig.Name] = true
	}
	for sig := range m.exportedSignals {
		if !signals[sig] {
			match := prometheus.Labels{labelSignal: sig}
			m.signalValue.DeletePartialMatch(match)
			m.signalPenalty.DeletePartialMatch(match)
			m.signalStatus.DeletePartialMatch(match)
			delete(m.exportedSignals, sig)
		}
	}
}

// exportRoute sets the state gauges of one route.
func (m *Metrics) exportRoute(pol *evaluator.Policy, route string, rs *evaluator.RouteState, now time.Time) {
	m.routeScore.WithLabelValues(route).Set(rs.Score.Value)
	m.routeLevel.WithLabelValues(route).Set(float64(rs.Level))
	for l := evaluator.Normal; l <= evaluator.Manual; l++ {
		if l != rs.Level {
			m.routeLevelInfo.DeleteLabelValues(route, l.String())
		}
	}
	m.routeLevelInfo.WithLabelValues(route, rs.Level.String()).Set(1)
	m.routeLevelSince.WithLabelValues(route).Set(seconds(rs.Since))
	m.failbackStage.WithLabelValues(route).Set(float64(rs.Stage))
	m.failbackStageSince.WithLabelValues(route).Set(seconds(rs.StageSince))
	m.routeFailingSince.WithLabelValues(route).Set(seconds(rs.FailingSince))
	m.routeReleased.WithLabelValues(route).Set(boolValue(rs.Released))

	// A failback is new when it completed after the latest one already
	// counted. The first time a route is seen only failbacks completed at
	// this tick count: older ones were counted before a restart (restored
	// failbacks are copies of the last one's time).
	known := m.failbackRoutesKnown[route]
	latest := m.lastFailbackSeen[route]
	added, inWindow := 0, 0
	for _, t := range rs.Failbacks {
		if (known && t.After(m.lastFailbackSeen[route])) || (!known && !t.Before(now)) {
			added++
		}
		if t.After(latest) {
			latest = t
		}
		if now.Sub(t) < pol.Config.Failback.Window {
			inWindow++
		}
	}
	m.failbacksTotal.WithLabelValues(route).Add(float64(added))
	m.failbackRoutesKnown[route] = true
	m.lastFailbackSeen[route] = latest
	m.failbacksInWindow.WithLabelValues(route).Set(float64(inWindow))
	m.lastFailback.WithLabelValues(route).Set(seconds(latest))
}

// exportSignals sets the signal gauges of one route and collects its
// erroring signals into errs.
func (m *Metrics) exportSignals(pol *evaluator.Policy, route string, rs *evaluator.RouteState, snap evaluator.Snapshot, errs map[[2]string]bool) {
	for _, sig := range pol.Config.Signals {
		smp := snap.Get(route, sig.Name)
		if smp.Status == evaluator.StatusOK {
			m.signalValue.WithLabelValues(route, sig.Name).Set(smp.Value)
		} else {
			m.signalValue.DeleteLabelValues(route, sig.Name)
		}
		if smp.Status == evaluator.StatusError {
			reason := smp.Reason
			if reason == "" {
				reason = "unknown"
			}
			errs[[2]string{sig.Name, reason}] = true
		}
		penalty := 0.0
		for _, c := range rs.Score.Contributions {
			if c.Signal == sig.Name {
				penalty = c.Penalty
				break
			}
		}
		m.signalPenalty.WithLabelValues(route, sig.Name).Set(penalty)
		m.signalStatus.WithLabelValues(route, sig.Name).Set(float64(smp.Status))
	}
}

// deleteRoute drops every series of route.
func (m *Metrics) deleteRoute(route string) {
	match := prometheus.Labels{labelRoute: route}
	for _, v := range []*prometheus.GaugeVec{
		m.routeScore, m.routeLevel, m.routeLevelInfo, m.routeLevelSince, m.failbackStage,
		m.failbackStageSince, m.routeFailingSince, m.failbacksInWindow, m.lastFailback,
		m.routeReleased, m.trafficPercent, m.signalValue, m.signalPenalty, m.signalStatus,
	} {
		v.DeletePartialMatch(match)
	}
	m.failbacksTotal.DeletePartialMatch(match)
	delete(m.exportedRoutes, route)
	delete(m.lastFailbackSeen, route)
	delete(m.failbackRoutesKnown, route)
}

// deleteService drops every series of service.
func (m *Metrics) deleteService(service string) {
	match := prometheus.Labels{labelService: service}
	m.trafficPercent.DeletePartialMatch(match)
	m.serviceDegraded.DeletePartialMatch(match)
	m.serviceRetries.DeletePartialMatch(match)
	delete(m.exportedServices, service)
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
