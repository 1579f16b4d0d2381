package gauge

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"
)

// TestSeriesFollowsItsSeries: a Series sets, deletes and sets again the
// series it stands for, and a handle never outlives its series.
func TestSeriesFollowsItsSeries(t *testing.T) {
	v := NewVec(prometheus.GaugeOpts{Name: "x", Help: "X."}, "route")
	var s Series
	s.Set(v, 2, "a")
	if err := testutil.CollectAndCompare(v, strings.NewReader("# HELP x X.\n# TYPE x gauge\nx{route=\"a\"} 2\n")); err != nil {
		t.Fatal(err)
	}
	s.SetOrDelete(v, 0, false, "a")
	if n := testutil.CollectAndCount(v); n != 0 {
		t.Fatalf("%d series after the delete, want 0", n)
	}
	s.Delete(v) // nothing to delete: no-op
	s.SetOrDelete(v, 5, true, "a")
	if err := testutil.CollectAndCompare(v, strings.NewReader("# HELP x X.\n# TYPE x gauge\nx{route=\"a\"} 5\n")); err != nil {
		t.Fatalf("after setting again: %v", err)
	}
}

// TestVecScrapesAsGaugeVec: through random sets and deletes of series of
// two labels (given in the order the Vec was, not sorted), with scrapes
// between them and without, a Vec's scrape is a GaugeVec's given the same
// calls, and its series come out in the order Gather sorts them.
func TestVecScrapesAsGaugeVec(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	opts := prometheus.GaugeOpts{Name: "hermes_x", Help: "X."}
	v := NewVec(opts, "service", "route")
	want := prometheus.NewGaugeVec(opts, []string{"service", "route"})
	series := map[[2]string]*Series{}
	for step := range 3000 {
		k := [2]string{fmt.Sprintf("s%d", rng.IntN(5)), fmt.Sprintf("r%d", rng.IntN(40))}
		s := series[k]
		if s == nil {
			s = &Series{}
			series[k] = s
		}
		val := float64(rng.IntN(100)) / 7
		if rng.IntN(3) == 0 {
			s.Delete(v)
			want.DeleteLabelValues(k[0], k[1])
		} else {
			s.Set(v, val, k[0], k[1])
			want.WithLabelValues(k[0], k[1]).Set(val)
		}
		if rng.IntN(50) != 0 {
			continue
		}
		got, err := testutil.CollectAndFormat(v, expfmt.TypeTextPlain, "hermes_x")
		if err != nil {
			t.Fatal(err)
		}
		exp, err := testutil.CollectAndFormat(want, expfmt.TypeTextPlain, "hermes_x")
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != string(exp) {
			t.Fatalf("step %d: scrape\n%s\nwant\n%s", step, got, exp)
		}
		v.mu.Lock()
		for i := 1; i < len(v.series); i++ {
			if compareLabels(v.series[i-1], v.series[i]) >= 0 {
				t.Fatalf("step %d: series %d and %d out of order after a scrape", step, i-1, i)
			}
		}
		v.mu.Unlock()
	}
}

// TestVecScrapeWhileSet: scrapes run while an exporter sets, creates and
// deletes series (go test -race finds a race between them); each scrape
// is consistent (no series twice).
func TestVecScrapeWhileSet(t *testing.T) {
	v := NewVec(prometheus.GaugeOpts{Name: "hermes_x", Help: "X."}, "route")
	reg := prometheus.NewRegistry()
	reg.MustRegister(v)
	done := make(chan struct{})
	go func() {
		defer close(done)
		series := make([]Series, 50)
		for i := range 20000 {
			s := &series[i%len(series)]
			if i%7 == 0 {
				s.Delete(v)
			} else {
				s.Set(v, float64(i), fmt.Sprintf("r%d", i%len(series)))
			}
		}
	}()
	for scrapes := 0; ; scrapes++ {
		select {
		case <-done:
			if scrapes == 0 {
				t.Log("the exporter finished before the first scrape")
			}
			return
		default:
		}
		if _, err := reg.Gather(); err != nil {
			t.Fatalf("scrape %d: %v", scrapes, err)
		}
	}
}
