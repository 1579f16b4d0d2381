package telemetry

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/runner/gauge"
)

// gaugeSeries is one of Update's series kept with its handle.
type gaugeSeries = gauge.Series

// routeSeries are the series Update writes for one route, and what it
// remembers about the route between ticks. Metrics keeps one per
// configured route and, for the policy of the last tick, a list of them in
// the policy's order, so a tick looks nothing up by name but the route's
// state and samples.
type routeSeries struct {
	route string
	score gaugeSeries
	// failbacks is the route's hermes_failbacks_total, nil until the route
	// first leaves normal.
	failbacks prometheus.Counter
	// failbacksSeen: the route's failbacks have been seen once, so a later
	// one is new when it is after lastFailback, the latest counted.
	failbacksSeen bool
	lastFailback  time.Time
	// detail: the route's per-signal series are exported (signalDetail).
	detail bool
	// signals are the per-signal series, by signal of the policy; nil
	// while detail is false.
	signals []signalSeries
}

// signalSeries are the three series of one signal of one route.
type signalSeries struct{ value, penalty, status gaugeSeries }

// deleteSignals deletes the per-signal series of the route.
func (r *routeSeries) deleteSignals(m *Metrics) {
	for i := range r.signals {
		r.signals[i].delete(m)
	}
	r.detail, r.signals = false, nil
}

// delete deletes every series of the route and forgets its failbacks.
func (r *routeSeries) delete(m *Metrics) {
	r.score.Delete(m.routeScore)
	r.deleteSignals(m)
	if r.failbacks != nil {
		m.failbacksTotal.DeleteLabelValues(r.route)
		r.failbacks = nil
	}
	r.failbacksSeen, r.lastFailback = false, time.Time{}
}

// delete deletes the three series.
func (s *signalSeries) delete(m *Metrics) {
	s.value.Delete(m.signalValue)
	s.penalty.Delete(m.signalPenalty)
	s.status.Delete(m.signalStatus)
}

// resignal lays the per-signal series out for the signals of a new
// policy: moved[i] is the index there of the previous policy's signal i,
// or -1 when it went; n is how many there are. The series of the signals
// that stay are kept, those of signals that went deleted.
func (r *routeSeries) resignal(m *Metrics, moved []int, n int) {
	if r.signals == nil {
		return
	}
	signals := make([]signalSeries, n)
	for i, j := range moved {
		if j >= 0 {
			signals[j] = r.signals[i]
		} else {
			r.signals[i].delete(m)
		}
	}
	r.signals = signals
}
