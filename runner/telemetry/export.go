package telemetry

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/traffic"
)

// Update sets every gauge from s, the state Step returned for the tick at
// now (the saved-state series through persist's Exporter), and every
// signal gauge from snap, that tick's snapshot.
// Routes, services and signals that are no longer in pol (after a reload)
// lose their series. Signal samples with StatusError count as query errors,
// once per signal and reason per call, since one failed query errs for
// every route.
func (m *Metrics) Update(pol *evaluator.Policy, s evaluator.State, snap evaluator.Snapshot, now time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()

	m.saved.Export(pol, s, now)
	m.forgetRemoved(pol)

	errs := map[[2]string]bool{}
	for _, route := range pol.Routes() {
		rs := s.Routes[route]
		if rs == nil {
			m.deleteRoute(route)
			continue
		}
		m.exportRoute(route, rs, now)
		m.exportSignals(pol, route, rs, snap, errs)
		m.exportedRoutes[route] = true
	}
	for _, sig := range pol.Config.Signals {
		m.exportedSignals[sig.Name] = true
	}
	for k := range errs {
		m.queryErrors.WithLabelValues(k[0], k[1]).Inc()
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

// exportRoute sets the score and failback counter of one route. The level
// is persist's hermes_route_level.
func (m *Metrics) exportRoute(route string, rs *evaluator.RouteState, now time.Time) {
	m.routeScore.WithLabelValues(route).Set(rs.Score.Value)

	// A failback is new when it completed after the latest one already
	// counted. The first time a route is seen only failbacks completed at
	// this tick count: older ones were counted before a restart (restored
	// failbacks are copies of the last one's time).
	known := m.failbackRoutesKnown[route]
	latest := m.lastFailbackSeen[route]
	added := 0
	for _, t := range rs.Failbacks {
		if (known && t.After(m.lastFailbackSeen[route])) || (!known && !t.Before(now)) {
			added++
		}
		if t.After(latest) {
			latest = t
		}
	}
	m.failbackRoutesKnown[route] = true
	if !latest.IsZero() {
		m.lastFailbackSeen[route] = latest
	}
	// The counter starts at 0 once the route leaves normal (a failback
	// needs a failover first, so rate and increase see it from 0) and then
	// stays: a route that never left normal has none.
	if rs.Level != traffic.Normal || added > 0 || m.failbackCounted[route] {
		m.failbacksTotal.WithLabelValues(route).Add(float64(added))
		m.failbackCounted[route] = true
	}
}

// signalDetail reports whether a route's per-signal series are exported:
// with Options.AllSignals, else while the route is not normal, some signal
// takes points off its score or a missing signal holds its level (then each
// signal's value, its penalty when not 0 and its status when not ok: the
// HermesSignalMissing runbook reads that status). A calm fleet then costs a few
// series per route, not a few per route and signal (docs/design.md counts
// them).
func (m *Metrics) signalDetail(rs *evaluator.RouteState) bool {
	return m.allSignals || rs.Level != traffic.Normal || rs.Score.Value < 100 || rs.Score.Held()
}

// exportSignals sets the signal gauges of one route, or drops them when
// signalDetail says so, and collects its erroring signals into errs.
func (m *Metrics) exportSignals(pol *evaluator.Policy, route string, rs *evaluator.RouteState, snap evaluator.Snapshot, errs map[[2]string]bool) {
	detail := m.signalDetail(rs)
	if !detail && m.signalRoutes[route] {
		m.deleteSignals(route)
	}
	row := snap.Row(route)
	for _, sig := range pol.Config.Signals {
		smp := row.Get(sig.Name)
		if smp.Status == evaluator.StatusError {
			reason := smp.Reason
			if reason == "" {
				reason = "unknown"
			}
			errs[[2]string{sig.Name, reason}] = true
		}
		if !detail {
			continue
		}
		if smp.Status == evaluator.StatusOK {
			m.signalValue.WithLabelValues(route, sig.Name).Set(smp.Value)
		} else {
			m.signalValue.DeleteLabelValues(route, sig.Name)
		}
		penalty := 0.0
		for _, c := range rs.Score.Contributions {
			if c.Signal == sig.Name {
				penalty = c.Penalty
				break
			}
		}
		// Without --metrics.per-signal a penalty of 0 and the status ok are
		// left out: a route that loses points to one signal costs about one
		// series per signal (its value, or its status when it has none).
		if m.allSignals || penalty != 0 {
			m.signalPenalty.WithLabelValues(route, sig.Name).Set(penalty)
		} else {
			m.signalPenalty.DeleteLabelValues(route, sig.Name)
		}
		if m.allSignals || smp.Status != evaluator.StatusOK {
			m.signalStatus.WithLabelValues(route, sig.Name).Set(float64(smp.Status))
		} else {
			m.signalStatus.DeleteLabelValues(route, sig.Name)
		}
	}
	if detail {
		m.signalRoutes[route] = true
	}
}

// deleteSignals drops the per-signal series of route.
func (m *Metrics) deleteSignals(route string) {
	match := prometheus.Labels{labelRoute: route}
	for _, v := range []*prometheus.GaugeVec{m.signalValue, m.signalPenalty, m.signalStatus} {
		v.DeletePartialMatch(match)
	}
	delete(m.signalRoutes, route)
}

// deleteRoute drops every series of route.
func (m *Metrics) deleteRoute(route string) {
	match := prometheus.Labels{labelRoute: route}
	m.routeScore.DeletePartialMatch(match)
	m.deleteSignals(route)
	m.failbacksTotal.DeletePartialMatch(match)
	delete(m.exportedRoutes, route)
	delete(m.lastFailbackSeen, route)
	delete(m.failbackRoutesKnown, route)
	delete(m.failbackCounted, route)
}
