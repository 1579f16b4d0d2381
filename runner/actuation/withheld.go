package actuation

import (
	"maps"
	"slices"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/labelname"
	"github.com/hermes-failover/hermes/runner/condlog"
	"github.com/hermes-failover/hermes/traffic"
)

// Why a service is withheld: written to no backend this tick. The values
// are the reason label of hermes_service_actuation_held, a series name
// kept from before "withheld" had a word of its own.
const (
	// WithheldNoData: every signal query of the tick failed, so the desired
	// state is the last one computed on data, possibly long ago; another
	// replica with data may have moved the traffic since.
	WithheldNoData = "no_data"
	// WithheldUnknownSplit: the restart could not learn what the backends hold
	// (nothing in Prometheus, a backend that cannot be read back), so the
	// levels are placeholders; or a pause whose frozen split was lost.
	WithheldUnknownSplit = "unknown_split"
	// WithheldReplicasDisagree: another replica stamped a different split in
	// the backend within the last two evaluation intervals; it holds the
	// lease, and this replica leaves its split (lease.go).
	WithheldReplicasDisagree = "replicas_disagree"
)

// withheldMetrics say which services the actuation stage does not write,
// and which pauses keep traffic on a failed route.
type withheldMetrics struct {
	withheld    *prometheus.GaugeVec
	pauseFailed *prometheus.GaugeVec
}

func newWithheldMetrics(reg prometheus.Registerer) *withheldMetrics {
	m := &withheldMetrics{
		withheld: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "hermes_service_actuation_held",
			Help: "1 while Hermes writes nothing for the service to any backend, by reason (no_data: the last tick had no data; unknown_split: a restart could not learn what the backends hold; replicas_disagree: another replica holds the backend).",
		}, []string{labelname.Service, "reason"}),
		pauseFailed: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "hermes_pause_on_failed_route",
			Help: "1 while an operator's pause keeps traffic on a route that is failed over or manual, or may keep it there: a pause of a split Hermes does not know (hermes_service_actuation_held{reason=\"unknown_split\"}) counts every failed route of the service.",
		}, []string{labelname.Service, labelname.Route}),
	}
	reg.MustRegister(m.withheld, m.pauseFailed)
	return m
}

// OperatorSplit reports whether the override of a service gives its split
// without the core's levels: a pin, or a pause that saved what it froze.
func OperatorSplit(o evaluator.Override, ok bool) bool {
	return ok && o.GivesSplit()
}

// withheldServices decides, for the tick that produced st, which services
// are written to no backend and why. A service whose split a person gave
// (a pin, a pause with its frozen split) is always written; if its split
// was unknown at the restart it stays so for when the override ends. Otherwise a
// tick without data withholds every service; and a service whose split
// was unknown at the restart stays withheld until the core has moved it
// on data: until no route that the plan gives traffic scores below the
// warm threshold, or the service is degraded (every route bad). s.mu
// must be held.
func (s *Stage) withheldServices(st evaluator.State, data bool) map[string]string {
	withheld := map[string]string{}
	var decided []string
	for _, svc := range slices.Sorted(maps.Keys(st.Services)) {
		o, ok := st.Overrides[svc]
		if OperatorSplit(o, ok) {
			// Written, but still unknown to the core: once the pin or
			// pause ends, the service is held until the core decides it
			// on data, rather than written with placeholder levels.
			continue
		}
		if s.unknownSplit[svc] {
			if ok && o.Kind == traffic.Pause || !data || !settled(st, svc) {
				withheld[svc] = WithheldUnknownSplit
				continue
			}
			delete(s.unknownSplit, svc)
			decided = append(decided, svc)
		}
		if !data {
			withheld[svc] = WithheldNoData
		}
	}
	if len(decided) > 0 {
		svc := decided[0]
		s.log.Info("the core decided on data: writing the services again", "services", len(decided), "first", condlog.FirstFew(decided),
			"service", svc, "weights", actuators.FormatWeights(st.Services[svc].Weights))
	}
	return withheld
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

// noteWithheld exports the withheld services and the pauses on failed
// routes, and logs when either changes: one line per reason, with the
// count of services and the first few.
func (s *Stage) noteWithheld(st evaluator.State, withheld map[string]string) {
	s.withheldMetrics.withheld.Reset()
	for svc, why := range withheld {
		s.withheldMetrics.withheld.WithLabelValues(svc, why).Set(1)
	}
	if !maps.Equal(withheld, s.lastWithheld) {
		groups := condlog.ByReason(withheld)
		for _, why := range slices.Sorted(maps.Keys(groups)) {
			s.log.Warn("writing nothing for these services: withheld", "reason", why, "services", len(groups[why]), "first", condlog.FirstFew(groups[why]))
		}
		s.lastWithheld = withheld
	}
	s.withheldMetrics.pauseFailed.Reset()
	var loud, blind []string
	for _, svc := range slices.Sorted(maps.Keys(st.Overrides)) {
		sp := st.Services[svc]
		if st.Overrides[svc].Kind != traffic.Pause || sp == nil {
			continue
		}
		// A pause of a split nobody knows (WithheldUnknownSplit) writes
		// nothing and the backends keep what they hold, which Hermes
		// cannot see: the planned split is a placeholder. Every failed
		// route of the service may then have traffic, so each counts.
		unknown := withheld[svc] == WithheldUnknownSplit
		for _, route := range slices.Sorted(maps.Keys(sp.Levels)) {
			if !sp.Levels[route].Failed() || !unknown && sp.Weights[route] == 0 {
				continue
			}
			s.withheldMetrics.pauseFailed.WithLabelValues(svc, route).Set(1)
			if unknown {
				blind = append(blind, svc+"/"+route)
			} else {
				loud = append(loud, svc+"/"+route)
			}
		}
	}
	if key := strings.Join(loud, ",") + ";" + strings.Join(blind, ","); key != s.lastPauseFailed {
		if len(loud) > 0 {
			s.log.Error("a pause keeps traffic on a failed route; clear or pin the service", "routes", len(loud), "first", condlog.FirstFew(loud))
		}
		if len(blind) > 0 {
			s.log.Error("a pause holds a split Hermes does not know while routes of the service are failed: the backends may send them traffic; check what they serve, then clear or pin the service",
				"routes", len(blind), "first", condlog.FirstFew(blind))
		}
		s.lastPauseFailed = key
	}
}

// withCurrent is desired with every withheld service replaced by what cur
// (one backend) holds now, so that backends that write a whole document
// keep the withheld services as they are. A withheld service cur lacks
// gets its split in known (what the stage last saw that backend hold;
// nil except for a holder, whose document would otherwise lose it), or
// is left out.
func withCurrent(cur, known, desired actuators.Splits, withheld map[string]string) actuators.Splits {
	out := make(actuators.Splits, len(desired))
	for svc, sp := range desired {
		if _, ok := withheld[svc]; !ok {
			out[svc] = sp
		} else if have, ok := cur[svc]; ok {
			out[svc] = have
		} else if have, ok := known[svc]; ok {
			out[svc] = have
		}
	}
	return out
}
