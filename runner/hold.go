package runner

import (
	"maps"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/labelname"
	"github.com/hermes-failover/hermes/traffic"
)

// Hold reasons: the reason label of hermes_service_actuation_held.
const (
	// holdNoData: every signal query of the tick failed, so the desired
	// state is the last one computed on data, possibly long ago; another
	// replica with data may have moved the traffic since.
	holdNoData = "no_data"
	// holdUnknownSplit: the restart could not learn what the backends hold
	// (nothing in Prometheus, a backend that cannot be read back), so the
	// levels are placeholders; or a pause whose frozen split was lost.
	holdUnknownSplit = "unknown_split"
	// holdReplicasDisagree: another replica stamped a different split in
	// the backend within the last two evaluation intervals; it holds the
	// lease, and this replica leaves its split (lease.go).
	holdReplicasDisagree = "replicas_disagree"
)

// holdMetrics say which services the runner does not write, and which
// pauses keep traffic on a failed route.
type holdMetrics struct {
	held        *prometheus.GaugeVec
	pauseFailed *prometheus.GaugeVec
}

func newHoldMetrics(reg prometheus.Registerer) *holdMetrics {
	m := &holdMetrics{
		held: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "hermes_service_actuation_held",
			Help: "1 while Hermes writes nothing for the service to any backend, by reason (no_data: the last tick had no data; unknown_split: a restart could not learn what the backends hold; replicas_disagree: another replica holds the backend).",
		}, []string{labelname.Service, "reason"}),
		pauseFailed: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "hermes_pause_on_failed_route",
			Help: "1 while an operator's pause keeps traffic on a route that is failed over or manual.",
		}, []string{labelname.Service, labelname.Route}),
	}
	reg.MustRegister(m.held, m.pauseFailed)
	return m
}

// operatorSplit reports whether the override of a service gives its split
// without the core's levels: a pin, or a pause that saved what it froze.
func operatorSplit(o evaluator.Override, ok bool) bool {
	return ok && (o.Kind == traffic.Pin || o.Kind == traffic.Pause && o.Frozen != nil)
}

// heldServices decides, for the tick that produced s, which services are
// written to no backend and why. A service whose split a person gave (a
// pin, a pause with its frozen split) is always written. Otherwise a tick
// without data holds every service; and a service whose split was unknown
// at the restart stays held until the core has moved it on data: until no
// route that the plan gives traffic scores below the warm threshold, or
// the service is degraded (every route bad). r.mu must be held.
func (r *Runner) heldServices(s evaluator.State, data bool) map[string]string {
	held := map[string]string{}
	for _, svc := range slices.Sorted(maps.Keys(s.Services)) {
		o, ok := s.Overrides[svc]
		if operatorSplit(o, ok) {
			delete(r.unknownSplit, svc)
			continue
		}
		if r.unknownSplit[svc] {
			if ok && o.Kind == traffic.Pause || !data || !settled(s, svc) {
				held[svc] = holdUnknownSplit
				continue
			}
			delete(r.unknownSplit, svc)
			r.log.Info("the core decided on data: writing the service again", "service", svc, "weights", actuators.FormatWeights(s.Services[svc].Weights))
		}
		if !data {
			held[svc] = holdNoData
		}
	}
	return held
}

// settled reports whether service svc's plan rests on data: no route with
// traffic scores below the warm threshold, or the service is degraded.
func settled(s evaluator.State, svc string) bool {
	sp := s.Services[svc]
	if sp.Degraded {
		return true
	}
	for route, w := range sp.Weights {
		if rs, ok := s.Routes[route]; w > 0 && ok && !rs.BelowSince[traffic.Warm].IsZero() {
			return false
		}
	}
	return true
}

// noteHolds exports the held services and the pauses on failed routes,
// and logs when either changes.
func (r *Runner) noteHolds(s evaluator.State, held map[string]string) {
	r.holds.held.Reset()
	for svc, why := range held {
		r.holds.held.WithLabelValues(svc, why).Set(1)
	}
	if !maps.Equal(held, r.lastHeld) {
		for _, svc := range slices.Sorted(maps.Keys(held)) {
			r.log.Warn("writing nothing for the service: held", "service", svc, "reason", held[svc])
		}
		r.lastHeld = held
	}
	r.holds.pauseFailed.Reset()
	var loud []string
	for _, svc := range slices.Sorted(maps.Keys(s.Overrides)) {
		sp := s.Services[svc]
		if s.Overrides[svc].Kind != traffic.Pause || sp == nil {
			continue
		}
		for _, route := range slices.Sorted(maps.Keys(sp.Weights)) {
			if sp.Weights[route] > 0 && sp.Levels[route].Failed() {
				r.holds.pauseFailed.WithLabelValues(svc, route).Set(1)
				loud = append(loud, svc+"/"+route)
			}
		}
	}
	if key := strings.Join(loud, ","); key != r.lastPauseFailed {
		if key != "" {
			r.log.Error("a pause keeps traffic on a failed route; clear or pin the service", "routes", loud)
		}
		r.lastPauseFailed = key
	}
}

// withHeld is desired with every held service replaced by what cur (one
// backend) holds now, or left out when it holds nothing for it, so that
// backends that write a whole document keep the held services as they are.
func withHeld(cur, desired actuators.Splits, held map[string]string) actuators.Splits {
	out := make(actuators.Splits, len(desired))
	for svc, sp := range desired {
		if _, ok := held[svc]; !ok {
			out[svc] = sp
		} else if have, ok := cur[svc]; ok {
			out[svc] = have
		}
	}
	return out
}
