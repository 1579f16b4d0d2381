// Package gauge holds the gauges of Hermes's own per-route series
// (packages persist and telemetry): a Vec is one family, read at scrape
// time, and a Series one of its series, kept by its exporter with its
// route from tick to tick.
package gauge

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Vec is a family of gauges of one name and label names, a
// prometheus.Collector that emits, at scrape time, the value each series
// was last set to, as Alertmanager's dispatch metrics emit theirs: a tick
// writes values only, and a scrape reads them.
//
// It replaces prometheus.GaugeVec for series that thousands of routes
// have (60,000 at 10,000 routes), because the registry's Gather spent
// most of a scrape on them: a GaugeVec's series come out of a hash map in
// random order and Gather sorts each family (a fifth of a scrape), and
// each series' labels are three separate allocations the sort and the
// checks chase (another fifth). A Vec keeps its series sorted as Gather
// sorts them (so its sort is one pass), built once per series with their
// labels beside them. What a scrape shows is unchanged: names, help,
// labels and values.
type Vec struct {
	desc *prometheus.Desc
	// name and help are the family's, for Registry's scrape.
	name, help string
	// names are the label names sorted, as in a series' labels; order[i]
	// is the index among them of the i-th label value a Series is given.
	names []*string
	order []int
	// head is the family's HELP and TYPE lines as expfmt writes them, nil
	// when expfmt may escape its name or a label name (textHead).
	head []byte

	mu sync.Mutex
	// series are the series, sorted by their labels' values unless
	// unsorted, deleted ones (dead of them) included until the next scrape
	// or enough of them drop them.
	series   []*entry
	unsorted bool
	dead     int
}

// entry is one series of a Vec: its labels, ready for a scrape, and its
// value.
type entry struct {
	bits   atomic.Uint64 // math.Float64bits of the value
	dead   bool          // deleted; guarded by Vec.mu
	labels []*dto.LabelPair
	// text is the series' line in the text format up to its value
	// (sampleText), when the Vec has a head.
	text []byte
}

// NewVec creates a Vec named and described by opts with the label names
// labels. Register it like any collector.
func NewVec(opts prometheus.GaugeOpts, labels ...string) *Vec {
	fq := prometheus.BuildFQName(opts.Namespace, opts.Subsystem, opts.Name)
	v := &Vec{desc: prometheus.NewDesc(fq, opts.Help, labels, opts.ConstLabels), name: fq, help: opts.Help}
	sorted := slices.Clone(labels)
	slices.Sort(sorted)
	v.names = make([]*string, len(sorted))
	for i := range sorted {
		v.names[i] = &sorted[i]
	}
	v.order = make([]int, len(labels))
	for i, l := range labels {
		v.order[i] = slices.Index(sorted, l)
	}
	v.head = textHead(fq, opts.Help, labels)
	return v
}

// Describe implements prometheus.Collector.
func (v *Vec) Describe(ch chan<- *prometheus.Desc) { ch <- v.desc }

// Collect implements prometheus.Collector: it emits every series with
// the value it was last set to, in the order of their labels.
func (v *Vec) Collect(ch chan<- prometheus.Metric) {
	v.mu.Lock()
	v.sort()
	// One allocation for the scrape's metrics, each with its gauge.
	ms := make([]metric, len(v.series))
	for i, e := range v.series {
		ms[i] = metric{desc: v.desc, labels: e.labels, value: math.Float64frombits(e.bits.Load())}
	}
	v.mu.Unlock()
	for i := range ms {
		ch <- &ms[i]
	}
}

// sort drops the deleted series and sorts the others. v.mu is held.
func (v *Vec) sort() {
	v.compact()
	if v.unsorted {
		slices.SortFunc(v.series, compareLabels)
		v.unsorted = false
	}
}

// family is the Vec's series as a scrape's family, as the registry's
// Gather makes it of Collect's metrics (each with the value it was last
// set to, sorted by their labels), and nil when it has none (Gather leaves
// an empty family out). Every call builds a family of its own: a scrape
// may encode it while another scrape builds its own.
func (v *Vec) family() *dto.MetricFamily {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.sort()
	n := len(v.series)
	if n == 0 {
		return nil
	}
	// One allocation each for the family's metrics, gauges and values.
	ms := make([]dto.Metric, n)
	gs := make([]dto.Gauge, n)
	vals := make([]float64, n)
	mf := &dto.MetricFamily{Name: &v.name, Help: &v.help, Type: dto.MetricType_GAUGE.Enum(), Metric: make([]*dto.Metric, n)}
	for i, e := range v.series {
		vals[i] = math.Float64frombits(e.bits.Load())
		gs[i].Value = &vals[i]
		ms[i].Label, ms[i].Gauge = e.labels, &gs[i]
		mf.Metric[i] = &ms[i]
	}
	return mf
}

// compareLabels orders series as the registry's Gather sorts them: by
// their label values, in the order of the label names.
func compareLabels(a, b *entry) int {
	for i := range a.labels {
		if c := cmp.Compare(*a.labels[i].Value, *b.labels[i].Value); c != 0 {
			return c
		}
	}
	return 0
}

// add creates the series of label values lvs, in the order NewVec was
// given the label names. Like GaugeVec.WithLabelValues it panics on a
// wrong number of values or one that is not UTF-8 (route and service
// names are checked when the configuration is loaded).
func (v *Vec) add(lvs []string) *entry {
	if len(lvs) != len(v.names) {
		panic(fmt.Sprintf("gauge %s: %d label values for %d labels", v.desc, len(lvs), len(v.names)))
	}
	// The series, its label pairs and their values in one allocation
	// each, side by side.
	pairs := make([]dto.LabelPair, len(lvs))
	values := make([]string, len(lvs))
	e := &entry{labels: make([]*dto.LabelPair, len(lvs))}
	for i, lv := range lvs {
		if !utf8.ValidString(lv) {
			panic(fmt.Sprintf("gauge %s: label value %q is not UTF-8", v.desc, lv))
		}
		j := v.order[i]
		values[j] = lv
		pairs[j].Name, pairs[j].Value = v.names[j], &values[j]
		e.labels[j] = &pairs[j]
	}
	if v.head != nil {
		_, e.text = sampleText(v.name, v.help, e.labels)
	}
	v.mu.Lock()
	if n := len(v.series); n > 0 && compareLabels(v.series[n-1], e) > 0 {
		v.unsorted = true
	}
	v.series = append(v.series, e)
	v.mu.Unlock()
	return e
}

// remove deletes e, for the next scrape to drop, or now when deleted
// series are half of them (Hermes may run with nothing scraping it).
func (v *Vec) remove(e *entry) {
	v.mu.Lock()
	e.dead = true
	v.dead++
	if v.dead > len(v.series)/2 {
		v.compact()
	}
	v.mu.Unlock()
}

// compact drops the deleted series, keeping the others' order. v.mu is
// held.
func (v *Vec) compact() {
	if v.dead > 0 {
		v.series = slices.DeleteFunc(v.series, func(e *entry) bool { return e.dead })
		v.dead = 0
	}
}

// metric is one series as a scrape emits it.
type metric struct {
	desc   *prometheus.Desc
	labels []*dto.LabelPair
	value  float64
	gauge  dto.Gauge
}

// Desc implements prometheus.Metric.
func (m *metric) Desc() *prometheus.Desc { return m.desc }

// Write implements prometheus.Metric. The labels are shared with the
// series and other scrapes: a written metric is never changed.
func (m *metric) Write(out *dto.Metric) error {
	m.gauge.Value = &m.value
	out.Label, out.Gauge = m.labels, &m.gauge
	return nil
}

// Series is one series of a Vec, kept by its exporter while the series
// exists, the zero Series while it does not. Setting it costs no lookup
// by labels, and a series known not to exist is not deleted again: at
// 10,000 routes lookups were most of a tick's export. An exporter keeps
// one Series per label values: two would be two series of the same labels,
// which a scrape refuses.
type Series struct{ e *entry }

// Set sets the series to val, creating it in v with label values lvs
// when it does not exist.
func (s *Series) Set(v *Vec, val float64, lvs ...string) {
	if s.e == nil {
		s.e = v.add(lvs)
	}
	s.e.bits.Store(math.Float64bits(val))
}

// Delete deletes the series from v when it exists.
func (s *Series) Delete(v *Vec) {
	if s.e != nil {
		v.remove(s.e)
		s.e = nil
	}
}

// SetOrDelete sets the series to val when present and deletes it
// otherwise.
func (s *Series) SetOrDelete(v *Vec, val float64, present bool, lvs ...string) {
	if present {
		s.Set(v, val, lvs...)
	} else {
		s.Delete(v)
	}
}
