package gauge

import (
	"cmp"
	"slices"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Registry is a prometheus.Registry whose Vecs a scrape reads without
// the registry's per-series work: Gather returns the registry's families
// and, beside them, each Vec's series as a family built as the registry
// would build it (same names, help, labels, values and order).
//
// Why: at 10,000 routes the Vecs hold 40,000 series, and the registry's
// Gather spent most of a scrape on them: for each series, a Write into a
// fresh dto.Metric, a check of its label names and values, a hash of its
// labels against duplicates and then a sort of each family; about 40 ms a
// scrape, as much as encoding the text (scripts/bench-rss.sh's profile).
// A Vec already holds what those checks guarantee: its label names are
// fixed at NewVec, its label values checked to be UTF-8 when a series is
// created, each series is created once by its exporter (Series), and it
// keeps its series sorted. The registry still checks each Vec's
// descriptor when it is registered, so two families of one name are
// refused as before.
type Registry struct {
	*prometheus.Registry

	mu   sync.Mutex
	vecs []*Vec
}

// NewRegistry creates a Registry over a new prometheus.Registry.
func NewRegistry() *Registry {
	return &Registry{Registry: prometheus.NewRegistry()}
}

// Register registers c; a Vec is then scraped by Gather directly, any
// other collector by the registry.
func (r *Registry) Register(c prometheus.Collector) error {
	v, ok := c.(*Vec)
	if !ok {
		return r.Registry.Register(c)
	}
	if err := r.Registry.Register(described{v}); err != nil {
		return err
	}
	r.mu.Lock()
	r.vecs = append(r.vecs, v)
	r.mu.Unlock()
	return nil
}

// MustRegister registers each of cs and panics on the first error, as
// prometheus.Registry's does.
func (r *Registry) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

// Unregister unregisters c.
func (r *Registry) Unregister(c prometheus.Collector) bool {
	v, ok := c.(*Vec)
	if !ok {
		return r.Registry.Unregister(c)
	}
	r.mu.Lock()
	r.vecs = slices.DeleteFunc(r.vecs, func(w *Vec) bool { return w == v })
	r.mu.Unlock()
	return r.Registry.Unregister(described{v})
}

// Gather implements prometheus.Gatherer: the registry's families and the
// Vecs', sorted by name as the registry sorts them.
func (r *Registry) Gather() ([]*dto.MetricFamily, error) {
	mfs, err := r.Registry.Gather()
	r.mu.Lock()
	vecs := slices.Clone(r.vecs)
	r.mu.Unlock()
	for _, v := range vecs {
		if mf := v.family(); mf != nil {
			mfs = append(mfs, mf)
		}
	}
	slices.SortFunc(mfs, func(a, b *dto.MetricFamily) int { return cmp.Compare(a.GetName(), b.GetName()) })
	return mfs, err
}

// described stands for a Vec in the registry: it describes the Vec, so
// that registering it checks the Vec's name against every other
// collector's, and collects nothing (Gather adds the Vec's family).
type described struct{ v *Vec }

func (d described) Describe(ch chan<- *prometheus.Desc) { ch <- d.v.desc }
func (d described) Collect(chan<- prometheus.Metric)    {}
