// Package telemetry exports what Hermes decided and its own health as
// Prometheus metrics: scores, signals, ticks, query errors and reloads.
// The saved-state series (level, since, failback stage, split, ...; what a
// restart reads back) are the persist stage's, which exports them through
// persist.Exporter.
package telemetry

import (
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	versioncollector "github.com/prometheus/client_golang/prometheus/collectors/version"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/labelname"
	"github.com/hermes-failover/hermes/runner/gauge"
)

// Label names of Hermes's own series.
const (
	labelRoute  = labelname.Route
	labelSignal = labelname.Signal
	labelLevel  = "level"
	labelReason = "reason"
	labelResult = "result"
)

// Metrics holds every metric Hermes exports. Build it with New; its methods
// are safe for concurrent use.
type Metrics struct {
	mu sync.Mutex // guards the Update bookkeeping below

	routeScore        *gauge.Vec
	failbacksTotal    *prometheus.CounterVec
	signalValue       *gauge.Vec
	signalPenalty     *gauge.Vec
	signalStatus      *gauge.Vec
	tickDuration      prometheus.Histogram
	ticksTotal        prometheus.Counter
	ticksSkipped      prometheus.Counter
	queryErrors       *prometheus.CounterVec
	lastTick          prometheus.Gauge
	reloadSuccessful  prometheus.Gauge
	reloadSuccessTime prometheus.Gauge
	reloadsTotal      *prometheus.CounterVec
	reloadRequests    prometheus.Counter
	alertEvalErrors   *prometheus.CounterVec

	// allSignals keeps the per-signal series of every route (Options).
	allSignals bool
	// routes are the series of every route that may have some, by name;
	// routeList those of pol, the policy of the last Update, in its order,
	// and signals the names of its signals.
	pol       *evaluator.Policy
	routes    map[string]*routeSeries
	routeList []*routeSeries
	signals   []string
	lastErrs  []string // queryErrors.last, by signal
}

// Options tune what Metrics exports.
type Options struct {
	// AllSignals exports all three per-signal series (hermes_signal_value,
	// _penalty, _status) of every signal of every route, not only the
	// value, a penalty not 0 and a status not ok of the routes that are not
	// normal or lose points (flag --metrics.per-signal): 42 series per
	// route more with the 14 shipped signals.
	AllSignals bool
}

// New creates Hermes's metrics and registers them on reg, with
// hermes_build_info. A nil reg registers nothing (for tests and tools).
// The per-route series are read at scrape time from what the last Update
// set (gauge.Vec): a tick writes values, a scrape reads them.
func New(reg prometheus.Registerer, opts Options) *Metrics {
	f := promauto.With(reg)
	vec := func(name, help string, labels ...string) *gauge.Vec {
		v := gauge.NewVec(prometheus.GaugeOpts{Name: name, Help: help}, labels...)
		if reg != nil {
			reg.MustRegister(v)
		}
		return v
	}
	m := &Metrics{
		routeScore: vec("hermes_route_score", "Health score of the route, 0..100.", labelRoute),
		failbacksTotal: f.NewCounterVec(prometheus.CounterOpts{
			Name: "hermes_failbacks_total", Help: "Completed failbacks of the route; from the route's first departure from normal.",
		}, []string{labelRoute}),
		signalValue:   vec("hermes_signal_value", "Last value of the signal for the route (only while the signal answers).", labelRoute, labelSignal),
		signalPenalty: vec("hermes_signal_penalty", "Score points the signal took off the route (only when not 0, unless --metrics.per-signal).", labelRoute, labelSignal),
		signalStatus:  vec("hermes_signal_status", "Status of the signal for the route: 0 ok, 1 missing, 2 error (only when not ok, unless --metrics.per-signal).", labelRoute, labelSignal),
		tickDuration: f.NewHistogram(prometheus.HistogramOpts{
			Name:    "hermes_tick_duration_seconds",
			Help:    "Duration of a tick: queries, decision, actuation and alerts.",
			Buckets: []float64{.01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60},
		}),
		ticksTotal:   f.NewCounter(prometheus.CounterOpts{Name: "hermes_ticks_total", Help: "Ticks evaluated."}),
		ticksSkipped: f.NewCounter(prometheus.CounterOpts{Name: "hermes_ticks_skipped_total", Help: "Ticks skipped because the previous one overran its slot."}),
		queryErrors: f.NewCounterVec(prometheus.CounterOpts{
			Name: "hermes_query_errors_total", Help: "Failed signal queries, by signal and reason.",
		}, []string{labelSignal, labelReason}),
		lastTick:          f.NewGauge(prometheus.GaugeOpts{Name: "hermes_last_tick_timestamp_seconds", Help: "Unix time of the last evaluated tick."}),
		reloadSuccessful:  f.NewGauge(prometheus.GaugeOpts{Name: "hermes_config_last_reload_successful", Help: "1 when the last configuration (re)load succeeded."}),
		reloadSuccessTime: f.NewGauge(prometheus.GaugeOpts{Name: "hermes_config_last_reload_success_timestamp_seconds", Help: "Unix time of the last successful configuration (re)load."}),
		reloadsTotal: f.NewCounterVec(prometheus.CounterOpts{
			Name: "hermes_config_reloads_total", Help: "Configuration (re)loads, by result (success, failure).",
		}, []string{labelResult}),
		reloadRequests: f.NewCounter(prometheus.CounterOpts{
			Name: "hermes_config_reload_requests_total",
			Help: "Reload requests (HTTP, SIGHUP, file changes); requests that arrive while one is pending share its load, so this minus hermes_config_reloads_total were coalesced.",
		}),
		alertEvalErrors: f.NewCounterVec(prometheus.CounterOpts{
			Name: "hermes_alert_eval_errors_total", Help: "Alert expression evaluations that failed at run time, by alert; the alert counted as not holding.",
		}, []string{"alertname"}),
		allSignals: opts.AllSignals,
		routes:     map[string]*routeSeries{},
	}
	m.reloadsTotal.WithLabelValues("success")
	m.reloadsTotal.WithLabelValues("failure")
	if reg != nil {
		reg.MustRegister(versioncollector.NewCollector("hermes"))
	}
	return m
}

// ObserveTick records a tick that took d and was evaluated for time now.
func (m *Metrics) ObserveTick(d time.Duration, now time.Time) {
	m.tickDuration.Observe(d.Seconds())
	m.ticksTotal.Inc()
	m.lastTick.Set(seconds(now))
}

// TickSkipped counts a tick skipped because the previous one overran.
func (m *Metrics) TickSkipped() { m.ticksSkipped.Inc() }

// QueryError counts a failed query of signal, classified by reason
// (see evaluator.ErrorReason).
func (m *Metrics) QueryError(signal, reason string) {
	m.queryErrors.WithLabelValues(signal, reason).Inc()
}

// ConfigReload records a configuration (re)load at now and whether it succeeded.
func (m *Metrics) ConfigReload(ok bool, now time.Time) {
	if !ok {
		m.reloadSuccessful.Set(0)
		m.reloadsTotal.WithLabelValues("failure").Inc()
		return
	}
	m.reloadSuccessful.Set(1)
	m.reloadSuccessTime.Set(seconds(now))
	m.reloadsTotal.WithLabelValues("success").Inc()
}

// AlertEvalError counts a failed evaluation of the alert rule name.
func (m *Metrics) AlertEvalError(name string) { m.alertEvalErrors.WithLabelValues(name).Inc() }

// ReloadRequested counts a reload request, applied or coalesced.
func (m *Metrics) ReloadRequested() { m.reloadRequests.Inc() }

// seconds is t as Unix seconds (millisecond precision), 0 for the zero time.
func seconds(t time.Time) float64 {
	if t.IsZero() {
		return 0
	}
	return float64(t.UnixMilli()) / 1000
}
