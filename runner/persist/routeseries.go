package persist

import (
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// gaugeSeries is one series of a GaugeVec: the handle WithLabelValues
// returned, kept while the series exists, nil while it does not. Setting
// through the handle skips what each WithLabelValues costs (hashing and
// validating the label values, a lookup under the vector's lock), and a
// series known not to exist is not deleted again: at 10,000 routes those
// calls were most of a tick's export. The handle goes with its series:
// one kept after a delete would set a gauge no scrape sees.
type gaugeSeries struct{ g prometheus.Gauge }

// set sets the series of v with label values lvs to val, creating it when
// it does not exist.
func (s *gaugeSeries) set(v *prometheus.GaugeVec, val float64, lvs ...string) {
	if s.g == nil {
		s.g = v.WithLabelValues(lvs...)
	}
	s.g.Set(val)
}

// delete deletes the series of v with label values lvs when it exists.
func (s *gaugeSeries) delete(v *prometheus.GaugeVec, lvs ...string) {
	if s.g != nil {
		v.DeleteLabelValues(lvs...)
		s.g = nil
	}
}

// setOrDelete sets the series to val when present and deletes it
// otherwise. The optional saved-state series exist only while they differ
// from their default (docs/design.md): a calm fleet costs two saved-state
// series per route, and a series that ends means "default" to Restore,
// which checks it was still scraped at Hermes's last export.
func (s *gaugeSeries) setOrDelete(v *prometheus.GaugeVec, val float64, present bool, lvs ...string) {
	if present {
		s.set(v, val, lvs...)
	} else {
		s.delete(v, lvs...)
	}
}

// routeSeries are the saved-state series of one route, and what its
// export remembers between ticks. Export keeps one per configured route
// and, for the policy of the last tick, a list of them in the policy's
// order, so a tick looks nothing up by name but the route's state.
type routeSeries struct {
	route                                              string
	level, levelSince, stage, stageSince, failingSince gaugeSeries
	failbacksInWindow, lastFailback, released          gaugeSeries
	// lastFailbackSeen is the latest completed failback seen, zero when
	// none.
	lastFailbackSeen time.Time
	// ratios are the route's hermes_route_traffic_ratio series: one in the
	// serviceSeries of each service of the policy that has the route.
	ratios []ratioRef
}

// ratioRef is the traffic ratio series of a route in s, s.ratios[i].
type ratioRef struct {
	s *serviceSeries
	i int
}

// serviceSeries are the series of one service: its retries and degraded
// flags and the traffic ratio of each route of its chain.
type serviceSeries struct {
	name              string
	chain             []string      // the routes of ratios
	ratios            []gaugeSeries // by route of chain
	degraded, retries gaugeSeries
}

// delete deletes every series of the route, its traffic ratios in every
// service included, and forgets its failbacks.
func (r *routeSeries) delete(e *Exporter) {
	r.level.delete(e.level, r.route)
	r.levelSince.delete(e.levelSince, r.route)
	r.stage.delete(e.stage, r.route)
	r.stageSince.delete(e.stageSince, r.route)
	r.failingSince.delete(e.failingSince, r.route)
	r.failbacksInWindow.delete(e.failbacksInWindow, r.route)
	r.lastFailback.delete(e.lastFailback, r.route)
	r.released.delete(e.released, r.route)
	for _, ref := range r.ratios {
		ref.s.ratios[ref.i].delete(e.trafficRatio, ref.s.name, r.route)
	}
	r.lastFailbackSeen = time.Time{}
}

// delete deletes every series of the service.
func (s *serviceSeries) delete(e *Exporter) {
	for j, r := range s.chain {
		s.ratios[j].delete(e.trafficRatio, s.name, r)
	}
	s.degraded.delete(e.serviceDegraded, s.name)
	s.retries.delete(e.serviceRetries, s.name)
}

// rechain lays the ratios out for chain, the service's routes in a new
// policy: those of routes that stay keep their series, those of routes
// that left lose them.
func (s *serviceSeries) rechain(e *Exporter, chain []string) {
	ratios := make([]gaugeSeries, len(chain))
	for j, r := range s.chain {
		if k := slices.Index(chain, r); k >= 0 {
			ratios[k] = s.ratios[j]
		} else {
			s.ratios[j].delete(e.trafficRatio, s.name, r)
		}
	}
	s.chain, s.ratios = slices.Clone(chain), ratios
}
