package alerting

import (
	"errors"

	"github.com/prometheus/client_golang/prometheus"
)

// Reasons an alert is dropped (hermes_alerts_dropped_total{reason}).
const (
	DropQueueFull = "queue_full" // the Alertmanager's queue overflowed; the oldest went
	DropRejected  = "rejected"   // the Alertmanager answered 4xx: retrying cannot help
	DropShutdown  = "shutdown"   // still undelivered when the sender stopped
)

type metrics struct {
	sent          *prometheus.CounterVec
	dropped       *prometheus.CounterVec
	errors        *prometheus.CounterVec
	queueLength   *prometheus.GaugeVec
	queueCapacity prometheus.Gauge
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		sent: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hermes_alerts_sent_total",
			Help: "Alerts delivered to an Alertmanager.",
		}, []string{"alertmanager"}),
		dropped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hermes_alerts_dropped_total",
			Help: "Alerts given up for an Alertmanager: queue_full, rejected (4xx) or shutdown.",
		}, []string{"alertmanager", "reason"}),
		errors: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hermes_alertmanager_errors_total",
			Help: "Failed requests to an Alertmanager (connection errors and non-2xx answers), retries included.",
		}, []string{"alertmanager"}),
		queueLength: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "hermes_alert_queue_length",
			Help: "Alerts waiting to be sent to an Alertmanager.",
		}, []string{"alertmanager"}),
		queueCapacity: prometheus.NewGauge(prometheus.GaugeOpts{
			Name: "hermes_alert_queue_capacity",
			Help: "Capacity of each Alertmanager's alert queue.",
		}),
	}
	var err error
	m.sent = register(reg, m.sent, &err)
	m.dropped = register(reg, m.dropped, &err)
	m.errors = register(reg, m.errors, &err)
	m.queueLength = register(reg, m.queueLength, &err)
	m.queueCapacity = register(reg, m.queueCapacity, &err)
	return m, err
}

// register registers c, or returns the collector already registered under
// its name (a second Sender on one registry shares the series).
func register[C prometheus.Collector](reg prometheus.Registerer, c C, errp *error) C {
	err := reg.Register(c)
	if err == nil {
		return c
	}
	var are prometheus.AlreadyRegisteredError
	if errors.As(err, &are) {
		if old, ok := are.ExistingCollector.(C); ok {
			return old
		}
	}
	*errp = errors.Join(*errp, err)
	return c
}

// init creates every series of one Alertmanager at 0, so that rates work
// from the first failure.
func (m *metrics) init(am string) {
	m.sent.WithLabelValues(am)
	m.errors.WithLabelValues(am)
	for _, r := range []string{DropQueueFull, DropRejected, DropShutdown} {
		m.dropped.WithLabelValues(am, r)
	}
	m.queueLength.WithLabelValues(am).Set(0)
}

// forget deletes the queue series of an Alertmanager no longer configured;
// its counters stay, as counters do.
func (m *metrics) forget(am string) {
	m.queueLength.DeleteLabelValues(am)
}
