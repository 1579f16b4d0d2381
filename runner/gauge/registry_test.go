package gauge

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// text is g's scrape in the text format.
func text(t *testing.T, g prometheus.Gatherer) string {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	enc := expfmt.NewEncoder(&b, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			t.Fatal(err)
		}
	}
	return b.String()
}

// TestRegistryScrapesAsRegistry: through random sets and deletes of the
// series of two Vecs, a Registry's scrape is byte for byte that of a
// prometheus.Registry holding the same collectors (the Vecs, a counter
// named between them, a GaugeVec), empty Vecs included.
func TestRegistryScrapesAsRegistry(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	a := NewVec(prometheus.GaugeOpts{Name: "hermes_a", Help: "A."}, "service", "route")
	c := NewVec(prometheus.GaugeOpts{Name: "hermes_c", Help: "C."}, "route")
	empty := NewVec(prometheus.GaugeOpts{Name: "hermes_empty", Help: "Never set."}, "route")
	b := prometheus.NewCounter(prometheus.CounterOpts{Name: "hermes_b_total", Help: "B."})
	z := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: "hermes_z", Help: "Z."}, []string{"x"})
	fast, plain := NewRegistry(), prometheus.NewPedanticRegistry()
	fast.MustRegister(a, b, c, empty, z)
	plain.MustRegister(a, b, c, empty, z)
	as, cs := map[[2]string]*Series{}, map[string]*Series{}
	for step := range 2000 {
		svc, route := fmt.Sprintf("s%d", rng.IntN(4)), fmt.Sprintf("r%d", rng.IntN(30))
		k := [2]string{svc, route}
		if as[k] == nil {
			as[k] = &Series{}
		}
		if cs[route] == nil {
			cs[route] = &Series{}
		}
		present := rng.IntN(3) != 0
		as[k].SetOrDelete(a, float64(rng.IntN(100))/7, present, svc, route)
		cs[route].SetOrDelete(c, float64(step), !present, route)
		b.Inc()
		z.WithLabelValues(svc).Set(float64(step))
		if rng.IntN(40) != 0 {
			continue
		}
		got, want := text(t, fast), text(t, plain)
		if got != want {
			t.Fatalf("step %d: scrape\n%s\nwant\n%s", step, got, want)
		}
		if !strings.Contains(got, "hermes_a{") || strings.Contains(got, "hermes_empty") {
			t.Fatalf("step %d: the scrape lacks hermes_a or has the empty family:\n%s", step, got)
		}
	}
}

// TestRegistryRefusesATwin: a Vec named as a registered collector is
// refused, as prometheus.Registry refuses it, and an unregistered Vec is
// scraped no more.
func TestRegistryRefusesATwin(t *testing.T) {
	r := NewRegistry()
	r.MustRegister(prometheus.NewGauge(prometheus.GaugeOpts{Name: "hermes_x", Help: "X."}))
	if err := r.Register(NewVec(prometheus.GaugeOpts{Name: "hermes_x", Help: "X."}, "route")); err == nil {
		t.Error("a Vec named as a registered gauge was registered")
	}
	v := NewVec(prometheus.GaugeOpts{Name: "hermes_y", Help: "Y."}, "route")
	r.MustRegister(v)
	if err := r.Register(v); err == nil {
		t.Error("a Vec was registered twice")
	}
	var s Series
	s.Set(v, 1, "free")
	if !strings.Contains(text(t, r), `hermes_y{route="free"} 1`) {
		t.Fatalf("registered Vec not scraped:\n%s", text(t, r))
	}
	if !r.Unregister(v) || strings.Contains(text(t, r), "hermes_y") {
		t.Errorf("unregistered Vec still scraped:\n%s", text(t, r))
	}
}

// TestRegistryScrapeWhileSet: scrapes while an exporter sets, creates
// and deletes series (run under -race); each scrape sees sorted series.
func TestRegistryScrapeWhileSet(t *testing.T) {
	r := NewRegistry()
	v := NewVec(prometheus.GaugeOpts{Name: "hermes_x", Help: "X."}, "route")
	r.MustRegister(v)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	wg.Go(func() {
		ss := make([]Series, 50)
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			k := (i * 7) % len(ss)
			ss[k].SetOrDelete(v, float64(i), i%3 != 0, fmt.Sprintf("r%02d", k))
		}
	})
	for range 200 {
		mfs, err := r.Gather()
		if err != nil {
			t.Fatal(err)
		}
		for _, mf := range mfs {
			for i := 1; i < len(mf.Metric); i++ {
				if mf.Metric[i-1].Label[0].GetValue() >= mf.Metric[i].Label[0].GetValue() {
					t.Fatalf("series out of order: %v", mf.Metric)
				}
			}
		}
	}
	close(stop)
	wg.Wait()
}
