package persist

import (
	"slices"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/traffic"
)

// Exporter writes the saved state as gauges on a registry, for Prometheus
// to scrape and Restore to read back. Its methods are safe for concurrent
// use.
type Exporter struct {
	mu sync.Mutex

	level, levelSince               *prometheus.GaugeVec
	stage, stageSince               *prometheus.GaugeVec
	failingSince                    *prometheus.GaugeVec
	failbacksInWindow, lastFailback *prometheus.GaugeVec
	released                        *prometheus.GaugeVec
	trafficRatio                    *prometheus.GaugeVec
	serviceDegraded, serviceRetries *prometheus.GaugeVec
	alertActiveSince                *alertSeries
	routes                          map[string]bool
	services                        map[string][]string  // service → routes of its chain
	alerts                          map[string][]string  // alert key → label values of its series
	lastFailbackSeen                map[string]time.Time // route → latest completed failback
}

// NewExporter creates the saved-state gauges and registers them on reg (a
// nil reg registers nothing).
func NewExporter(reg prometheus.Registerer) *Exporter {
	f := promauto.With(reg)
	gauge := func(name, help string, labels ...string) *prometheus.GaugeVec {
		return f.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, labels)
	}
	alerts := newAlertSeries()
	if reg != nil {
		reg.MustRegister(alerts)
	}
	return &Exporter{
		level:             gauge(MetricRouteLevel, "Degradation level of the route: 0 normal, 1 warm, 2 shed, 3 failover, 4 manual.", RouteLabel),
		levelSince:        gauge(MetricRouteLevelSince, "Unix time the route's current level began.", RouteLabel),
		stage:             gauge(MetricFailbackStage, "Failback stage of the route (1-based index into failback.stages); absent when none.", RouteLabel),
		stageSince:        gauge(MetricFailbackStageSince, "Unix time the route's failback stage began; absent when none.", RouteLabel),
		failingSince:      gauge(MetricRouteFailingSince, "Unix time since which a failed-over route has been failing; absent when not failing.", RouteLabel),
		failbacksInWindow: gauge(MetricRouteFailbacksInWindow, "Completed failbacks of the route within the failback window; absent when none.", RouteLabel),
		lastFailback:      gauge(MetricRouteLastFailback, "Unix time of the route's last completed failback within the failback window; absent when none.", RouteLabel),
		released:          gauge(MetricRouteReleased, "1 when a person released the route from manual and its next failback ignores the budget; absent otherwise.", RouteLabel),
		trafficRatio:      gauge(MetricRouteTrafficRatio, "Planned share of the service's traffic sent to the route, 0 to 1.", ServiceLabel, RouteLabel),
		serviceDegraded:   gauge(MetricServiceDegraded, "1 when every route of the service is bad and the least bad one serves it; absent otherwise.", ServiceLabel),
		serviceRetries:    gauge(MetricServiceRetriesEnabled, "1 when the gateway may retry the service's calls.", ServiceLabel),
		alertActiveSince:  alerts,
		routes:            map[string]bool{},
		services:          map[string][]string{},
		alerts:            map[string][]string{},
		lastFailbackSeen:  map[string]time.Time{},
	}
}

// Export sets every saved-state series from s, the state Step returned for
// the tick at now. Routes and services no longer in pol, and alerts no
// longer active, lose their series.
func (e *Exporter) Export(pol *evaluator.Policy, s evaluator.State, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.forgetRemoved(pol)
	for _, route := range pol.Routes() {
		rs := s.Routes[route]
		if rs == nil {
			e.deleteRoute(route)
			continue
		}
		e.exportRoute(pol, route, rs.SavedRoute, now)
		e.routes[route] = true
	}
	for _, svc := range pol.Config.Services {
		st := s.Services[svc.Name]
		if st == nil {
			e.deleteService(svc.Name)
			continue
		}
		for _, r := range svc.Routes {
			e.trafficRatio.WithLabelValues(svc.Name, r).Set(float64(st.Weights[r]) / 100)
		}
		setOrDelete(e.serviceDegraded, 1, st.Degraded, svc.Name)
		e.serviceRetries.WithLabelValues(svc.Name).Set(boolValue(st.RetriesEnabled))
		e.services[svc.Name] = slices.Clone(svc.Routes)
	}
	e.exportAlerts(s.Alerts)
}

func (e *Exporter) exportRoute(pol *evaluator.Policy, route string, rs evaluator.SavedRoute, now time.Time) {
	e.level.WithLabelValues(route).Set(float64(rs.Level))
	e.levelSince.WithLabelValues(route).Set(seconds(rs.Since))
	setOrDelete(e.stage, float64(rs.Stage), rs.Stage > 0, route)
	setOrDelete(e.stageSince, seconds(rs.StageSince), rs.Stage > 0, route)
	setOrDelete(e.failingSince, seconds(rs.FailingSince), !rs.FailingSince.IsZero(), route)
	setOrDelete(e.released, 1, rs.Released, route)
	latest, inWindow := e.lastFailbackSeen[route], 0
	for _, t := range rs.Failbacks {
		if t.After(latest) {
			latest = t
		}
		if now.Sub(t) < pol.Config.Failback.Window {
			inWindow++
		}
	}
	if latest.IsZero() {
		delete(e.lastFailbackSeen, route)
	} else {
		e.lastFailbackSeen[route] = latest
	}
	setOrDelete(e.failbacksInWindow, float64(inWindow), inWindow > 0, route)
	setOrDelete(e.lastFailback, seconds(latest), inWindow > 0, route)
}

// setOrDelete sets the series of v with labels to val when present, and
// deletes it otherwise. The optional saved-state series exist only while
// they differ from their default (docs/design.md): a calm fleet costs two
// saved-state series per route, and a series that ends means "default" to
// Restore, which checks it was still scraped at Hermes's last export.
func setOrDelete(v *prometheus.GaugeVec, val float64, present bool, labels ...string) {
	if present {
		v.WithLabelValues(labels...).Set(val)
	} else {
		v.DeleteLabelValues(labels...)
	}
}

// exportAlerts sets the active-since series of every pending or firing
// alert and deletes those of alerts that are no longer active.
func (e *Exporter) exportAlerts(alerts map[string]*evaluator.Alert) {
	seen := map[string]bool{}
	for k, a := range alerts {
		if !a.Active() {
			continue
		}
		vals := a.ForStateValues()
		e.alertActiveSince.set(k, vals, seconds(a.ActiveAt))
		e.alerts[k] = vals
		seen[k] = true
	}
	for k := range e.alerts {
		if !seen[k] {
			e.alertActiveSince.delete(k)
			delete(e.alerts, k)
		}
	}
}

// forgetRemoved deletes the series of routes and services (or a service's
// routes) that pol no longer has.
func (e *Exporter) forgetRemoved(pol *evaluator.Policy) {
	configured := make(map[string]bool, len(pol.Routes()))
	for _, r := range pol.Routes() {
		configured[r] = true
	}
	for r := range e.routes {
		if !configured[r] {
			e.deleteRoute(r)
		}
	}
	chains := map[string][]string{}
	for _, svc := range pol.Config.Services {
		chains[svc.Name] = svc.Routes
	}
	for name, old := range e.services {
		chain, ok := chains[name]
		if !ok {
			e.deleteService(name)
			continue
		}
		for _, r := range old {
			if !slices.Contains(chain, r) {
				e.trafficRatio.DeleteLabelValues(name, r)
			}
		}
	}
}

func (e *Exporter) deleteRoute(route string) {
	match := prometheus.Labels{RouteLabel: route}
	for _, v := range []*prometheus.GaugeVec{e.level, e.levelSince, e.stage, e.stageSince, e.failingSince,
		e.failbacksInWindow, e.lastFailback, e.released, e.trafficRatio} {
		v.DeletePartialMatch(match)
	}
	delete(e.routes, route)
	delete(e.lastFailbackSeen, route)
}

func (e *Exporter) deleteService(service string) {
	match := prometheus.Labels{ServiceLabel: service}
	for _, v := range []*prometheus.GaugeVec{e.trafficRatio, e.serviceDegraded, e.serviceRetries} {
		v.DeletePartialMatch(match)
	}
	delete(e.services, service)
}

// levelOf reads a level series' value.
func levelOf(v float64) (traffic.Level, bool) {
	if !isInt(v) || v < float64(traffic.Normal) || v > float64(traffic.Manual) {
		return traffic.Normal, false
	}
	return traffic.Level(v), true
}

// seconds is t as Unix seconds (millisecond precision), 0 for the zero time.
func seconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixMilli()) / 1000
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}
