// Package gauge keeps the handle of one series of a prometheus.GaugeVec
// together with the series, for exporters that set the same series tick
// after tick (packages persist and telemetry).
package gauge

import "github.com/prometheus/client_golang/prometheus"

// Series is one series of a GaugeVec: the handle WithLabelValues
// returned, kept while the series exists, nil while it does not. Setting
// through the handle skips what each WithLabelValues costs (hashing and
// validating the label values, a lookup under the vector's lock), and a
// series known not to exist is not deleted again: at 10,000 routes those
// calls were most of a tick's export. The handle goes with its series:
// one kept after a delete would set a gauge no scrape sees. The zero
// Series is a series that does not exist.
type Series struct{ g prometheus.Gauge }

// Set sets the series of v with label values lvs to val, creating it when
// it does not exist.
func (s *Series) Set(v *prometheus.GaugeVec, val float64, lvs ...string) {
	if s.g == nil {
		s.g = v.WithLabelValues(lvs...)
	}
	s.g.Set(val)
}

// Delete deletes the series of v with label values lvs when it exists.
func (s *Series) Delete(v *prometheus.GaugeVec, lvs ...string) {
	if s.g != nil {
		v.DeleteLabelValues(lvs...)
		s.g = nil
	}
}

// SetOrDelete sets the series to val when present and deletes it
// otherwise.
func (s *Series) SetOrDelete(v *prometheus.GaugeVec, val float64, present bool, lvs ...string) {
	if present {
		s.Set(v, val, lvs...)
	} else {
		s.Delete(v, lvs...)
	}
}
