package persist

import (
	"slices"
	"time"

	"github.com/hermes-failover/hermes/runner/gauge"
)

// gaugeSeries is a saved-state series kept with its handle. The optional
// saved-state series exist only while they differ from their default
// (docs/design.md; SetOrDelete): a calm fleet costs two saved-state series
// per route, and a series that ends means "default" to Restore, which
// checks it was still scraped at Hermes's last export.
type gaugeSeries = gauge.Series

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
	r.level.Delete(e.level)
	r.levelSince.Delete(e.levelSince)
	r.stage.Delete(e.stage)
	r.stageSince.Delete(e.stageSince)
	r.failingSince.Delete(e.failingSince)
	r.failbacksInWindow.Delete(e.failbacksInWindow)
	r.lastFailback.Delete(e.lastFailback)
	r.released.Delete(e.released)
	for _, ref := range r.ratios {
		ref.s.ratios[ref.i].Delete(e.trafficRatio)
	}
	r.lastFailbackSeen = time.Time{}
}

// delete deletes every series of the service.
func (s *serviceSeries) delete(e *Exporter) {
	for j := range s.chain {
		s.ratios[j].Delete(e.trafficRatio)
	}
	s.degraded.Delete(e.serviceDegraded)
	s.retries.Delete(e.serviceRetries)
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
			s.ratios[j].Delete(e.trafficRatio)
		}
	}
	s.chain, s.ratios = slices.Clone(chain), ratios
}
