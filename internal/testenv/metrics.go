package testenv

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Metric gathers g and returns the value of the first series of name whose
// labels include every pair of labels: a counter's or gauge's value, a
// histogram's sample count. It returns -1 when there is no such series.
func Metric(t testing.TB, g prometheus.Gatherer, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if hasLabels(m, labels) {
				return metricValue(m)
			}
		}
	}
	return -1
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	got := make(map[string]string, len(m.GetLabel()))
	for _, lp := range m.GetLabel() {
		got[lp.GetName()] = lp.GetValue()
	}
	for k, v := range want {
		if got[k] != v {
			return false
		}
	}
	return true
}

func metricValue(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	case m.Untyped != nil:
		return m.GetUntyped().GetValue()
	}
	return -1
}
