package persist

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/runner/gauge"
	"github.com/hermes-failover/hermes/traffic"
)

// Exporter writes the saved state as gauges on a registry, for Prometheus
// to scrape and Restore to read back. Its methods are safe for concurrent
// use.
type Exporter struct {
	mu sync.Mutex

	level, levelSince               *gauge.Vec
	stage, stageSince               *gauge.Vec
	failingSince                    *gauge.Vec
	failbacksInWindow, lastFailback *gauge.Vec
	released                        *gauge.Vec
	trafficRatio                    *gauge.Vec
	serviceDegraded, serviceRetries *gauge.Vec
	alertActiveSince                *alertSeries
	alerts                          map[string][]string // alert key → label values of its series

	// routes and services are the series of every route and service that
	// may have some, by name; routeList and serviceList those of pol, the
	// policy of the last Export, in its order (Routes(), Config.Services).
	pol         *evaluator.Policy
	routes      map[string]*routeSeries
	services    map[string]*serviceSeries
	routeList   []*routeSeries
	serviceList []*serviceSeries
}

// NewExporter creates the saved-state gauges and registers them on reg (a
// nil reg registers nothing). A scrape reads what the last Export set
// (gauge.Vec).
func NewExporter(reg prometheus.Registerer) *Exporter {
	vec := func(name, help string, labels ...string) *gauge.Vec {
		v := gauge.NewVec(prometheus.GaugeOpts{Name: name, Help: help}, labels...)
		if reg != nil {
			reg.MustRegister(v)
		}
		return v
	}
	alerts := newAlertSeries()
	if reg != nil {
		reg.MustRegister(alerts)
	}
	return &Exporter{
		level:             vec(MetricRouteLevel, "Degradation level of the route: 0 normal, 1 warm, 2 shed, 3 failover, 4 manual.", RouteLabel),
		levelSince:        vec(MetricRouteLevelSince, "Unix time the route's current level began.", RouteLabel),
		stage:             vec(MetricFailbackStage, "Failback stage of the route (1-based index into failback.stages); absent when none.", RouteLabel),
		stageSince:        vec(MetricFailbackStageSince, "Unix time the route's failback stage began; absent when none.", RouteLabel),
		failingSince:      vec(MetricRouteFailingSince, "Unix time since which a failed-over route has been failing; absent when not failing.", RouteLabel),
		failbacksInWindow: vec(MetricRouteFailbacksInWindow, "Completed failbacks of the route within the failback window; absent when none.", RouteLabel),
		lastFailback:      vec(MetricRouteLastFailback, "Unix time of the route's last completed failback within the failback window; absent when none.", RouteLabel),
		released:          vec(MetricRouteReleased, "1 when a person released the route from manual and its next failback ignores the budget; absent otherwise.", RouteLabel),
		trafficRatio:      vec(MetricRouteTrafficRatio, "Planned share of the service's traffic sent to the route, 0 to 1.", ServiceLabel, RouteLabel),
		serviceDegraded:   vec(MetricServiceDegraded, "1 when every route of the service is bad and the least bad one serves it; absent otherwise.", ServiceLabel),
		serviceRetries:    vec(MetricServiceRetriesEnabled, "1 when the gateway may retry the service's calls.", ServiceLabel),
		alertActiveSince:  alerts,
		alerts:            map[string][]string{},
		routes:            map[string]*routeSeries{},
		services:          map[string]*serviceSeries{},
	}
}

// Export sets every saved-state series from s, the state Step returned for
// the tick at now. Routes and services no longer in pol, and alerts no
// longer active, lose their series. The services of unknown have their
// split unknown (s holds the core's placeholder): they export no traffic
// ratio, so that neither a chart nor the next restart takes the
// placeholder for the split.
func (e *Exporter) Export(pol *evaluator.Policy, s evaluator.State, unknown map[string]bool, now time.Time) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if pol != e.pol {
		e.layOut(pol)
	}
	for i, route := range pol.Routes() {
		r := e.routeList[i]
		rs := s.Routes[route]
		if rs == nil {
			r.delete(e)
			continue
		}
		e.exportRoute(pol, r, rs.SavedRoute, now)
	}
	for k, svc := range pol.Config.Services {
		sv := e.serviceList[k]
		st := s.Services[svc.Name]
		if st == nil {
			sv.delete(e)
			continue
		}
		// A dry-run drill's plan is not exported as the split: the
		// actuators keep the one from before it (State.DryRunHold).
		weights := st.Weights
		if kept, ok := s.DryRunHold(svc.Name); ok {
			weights = kept.Weights
		}
		for j, r := range sv.chain {
			sv.ratios[j].SetOrDelete(e.trafficRatio, float64(weights[r])/100, !unknown[svc.Name], sv.name, r)
		}
		sv.degraded.SetOrDelete(e.serviceDegraded, 1, st.Degraded, sv.name)
		sv.retries.Set(e.serviceRetries, boolValue(st.RetriesEnabled), sv.name)
	}
	e.exportAlerts(s.Alerts)
}

func (e *Exporter) exportRoute(pol *evaluator.Policy, r *routeSeries, rs evaluator.SavedRoute, now time.Time) {
	r.level.Set(e.level, float64(rs.Level), r.route)
	r.levelSince.Set(e.levelSince, seconds(rs.Since), r.route)
	r.stage.SetOrDelete(e.stage, float64(rs.Stage), rs.Stage > 0, r.route)
	r.stageSince.SetOrDelete(e.stageSince, seconds(rs.StageSince), rs.Stage > 0, r.route)
	r.failingSince.SetOrDelete(e.failingSince, seconds(rs.FailingSince), !rs.FailingSince.IsZero(), r.route)
	r.released.SetOrDelete(e.released, 1, rs.Released, r.route)
	latest, inWindow := r.lastFailbackSeen, 0
	for _, t := range rs.Failbacks {
		if t.After(latest) {
			latest = t
		}
		if now.Sub(t) < pol.Config.Failback.Window {
			inWindow++
		}
	}
	r.lastFailbackSeen = latest
	r.failbacksInWindow.SetOrDelete(e.failbacksInWindow, float64(inWindow), inWindow > 0, r.route)
	r.lastFailback.SetOrDelete(e.lastFailback, seconds(latest), inWindow > 0, r.route)
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

// layOut readies the series for pol, a policy other than the last
// Export's: it deletes the series of the routes and services that pol no
// longer has (and of the routes a service no longer has), and lays out
// routeList and serviceList in pol's order. A policy is built once per
// (re)load and never changed, so the ticks between two reloads find their
// routes' and services' series without a lookup by name.
func (e *Exporter) layOut(pol *evaluator.Policy) {
	configured := make(map[string]bool, len(pol.Routes()))
	for _, r := range pol.Routes() {
		configured[r] = true
	}
	for name, r := range e.routes {
		if !configured[name] {
			r.delete(e) // before rechain: r.ratios point into the old chains
			delete(e.routes, name)
		}
	}
	chains := make(map[string][]string, len(pol.Config.Services))
	for _, svc := range pol.Config.Services {
		chains[svc.Name] = svc.Routes
	}
	for name, sv := range e.services {
		if chain, ok := chains[name]; ok {
			sv.rechain(e, chain)
		} else {
			sv.delete(e)
			delete(e.services, name)
		}
	}

	e.routeList = make([]*routeSeries, len(pol.Routes()))
	for i, name := range pol.Routes() {
		r := e.routes[name]
		if r == nil {
			r = &routeSeries{route: name}
			e.routes[name] = r
		}
		r.ratios = r.ratios[:0]
		e.routeList[i] = r
	}
	e.serviceList = make([]*serviceSeries, len(pol.Config.Services))
	for k, svc := range pol.Config.Services {
		sv := e.services[svc.Name]
		if sv == nil {
			sv = &serviceSeries{name: svc.Name}
			sv.rechain(e, svc.Routes)
			e.services[svc.Name] = sv
		}
		e.serviceList[k] = sv
		for j, name := range sv.chain {
			r := e.routes[name]
			r.ratios = append(r.ratios, ratioRef{sv, j})
		}
	}
	e.pol = pol
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
