package persist

import (
	"sync"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/evaluator"
)

// alertSeries exports MetricAlertActiveSince: one series per active alert,
// labelled with the non-empty ones of evaluator.ForStateLabels. A GaugeVec
// would export every label of the set, `actuator=""` on a route's alert;
// Prometheus conventions have no empty labels. It is an unchecked
// collector: its series have label sets of their own.
type alertSeries struct {
	mu     sync.Mutex
	series map[string]alertSample // key → labels and value
}

type alertSample struct {
	labels prometheus.Labels
	value  float64
}

const alertHelp = "Unix time a pending or firing alert became active, like ALERTS_FOR_STATE; read back at start-up to restore alerts."

func newAlertSeries() *alertSeries { return &alertSeries{series: map[string]alertSample{}} }

// set sets the series of key to the ForStateValues vals and value v.
func (s *alertSeries) set(key string, vals []string, v float64) {
	ls := prometheus.Labels{}
	for i, name := range evaluator.ForStateLabels {
		if vals[i] != "" {
			ls[name] = vals[i]
		}
	}
	s.mu.Lock()
	s.series[key] = alertSample{labels: ls, value: v}
	s.mu.Unlock()
}

// delete drops the series of key.
func (s *alertSeries) delete(key string) {
	s.mu.Lock()
	delete(s.series, key)
	s.mu.Unlock()
}

// Describe sends nothing: alertSeries is unchecked.
func (*alertSeries) Describe(chan<- *prometheus.Desc) {}

// Collect sends every series.
func (s *alertSeries) Collect(ch chan<- prometheus.Metric) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, a := range s.series {
		desc := prometheus.NewDesc(MetricAlertActiveSince, alertHelp, nil, a.labels)
		ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, a.value)
	}
}
