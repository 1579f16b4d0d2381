package gauge

import (
	"bufio"
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
)

// TestWriteTextAsExpfmt: GatherText's scrape, written in each text
// format, is byte for byte what expfmt writes of Gather's families in that
// format, through random sets and deletes of Vecs' series whose values
// include NaN, ±Inf, -0, ±1 and numbers of every size and whose labels
// and help need escaping; beside a counter named between them, an empty
// Vec and a Vec whose label name is no legacy name (left to expfmt).
func TestWriteTextAsExpfmt(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	a := NewVec(prometheus.GaugeOpts{Name: "hermes_a", Help: "A \\ with\na newline."}, "service", "route")
	c := NewVec(prometheus.GaugeOpts{Name: "hermes_c", Help: ""}, "route")
	empty := NewVec(prometheus.GaugeOpts{Name: "hermes_empty", Help: "Never set."}, "route")
	odd := NewVec(prometheus.GaugeOpts{Name: "hermes_odd", Help: "Odd."}, "route.name")
	b := prometheus.NewCounter(prometheus.CounterOpts{Name: "hermes_b_total", Help: "B."})
	reg := NewRegistry()
	reg.MustRegister(a, b, c, empty, odd)
	if a.head == nil || odd.head != nil {
		t.Fatalf("heads: hermes_a %q, hermes_odd %q", a.head, odd.head)
	}
	routes := []string{"r", `quo"te`, `back\slash`, "new\nline", "日本/模型", "sp ace", ""}
	values := []float64{0, math.Copysign(0, -1), 1, -1, math.NaN(), math.Inf(1), math.Inf(-1), 0.1, 1e300, 5e-324, 123456789, -2.5e-7, 1 << 53}
	as, cs, os := map[[2]string]*Series{}, map[string]*Series{}, map[string]*Series{}
	// The text formats a scraper may be answered in, as promhttp negotiates them.
	var formats []expfmt.Format
	for _, accept := range []string{"text/plain;version=0.0.4", "text/plain;version=1.0.0;escaping=allow-utf-8",
		"text/plain;version=0.0.4;escaping=dots", "text/plain;version=1.0.0;escaping=values", "*/*"} {
		f := expfmt.NegotiateAccept(http.Header{"Accept": {accept}}, expfmt.DefaultAcceptedFormats()...)
		if f.FormatType() != expfmt.TypeTextPlain {
			t.Fatalf("Accept %q: %s, not a text format", accept, f)
		}
		formats = append(formats, f)
	}
	checked := 0
	for step := range 3000 {
		svc, route := fmt.Sprintf("s%d", rng.IntN(3)), routes[rng.IntN(len(routes))]
		k := [2]string{svc, route}
		for _, m := range []map[string]*Series{cs, os} {
			if m[route] == nil {
				m[route] = &Series{}
			}
		}
		if as[k] == nil {
			as[k] = &Series{}
		}
		v := values[rng.IntN(len(values))]
		if rng.IntN(2) == 0 {
			v = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
		}
		present := rng.IntN(3) != 0
		as[k].SetOrDelete(a, v, present, svc, route)
		cs[route].SetOrDelete(c, v, !present, route)
		os[route].SetOrDelete(odd, v, present, route)
		b.Inc()
		if rng.IntN(50) != 0 {
			continue
		}
		for _, f := range formats {
			mfs, err := reg.Gather()
			if err != nil {
				t.Fatal(err)
			}
			var want bytes.Buffer
			enc := expfmt.NewEncoder(&want, f)
			for _, mf := range mfs {
				if err := enc.Encode(mf); err != nil {
					t.Fatal(err)
				}
			}
			scrape, err := reg.GatherText()
			if err != nil {
				t.Fatal(err)
			}
			var got bytes.Buffer
			w := bufio.NewWriter(&got)
			if err := scrape.Write(w, f); err != nil {
				t.Fatal(err)
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if got.String() != want.String() {
				t.Fatalf("step %d, %s: scrape\n%s\nwant\n%s", step, f, got.String(), want.String())
			}
			if !bytes.Contains(want.Bytes(), []byte("hermes_a{")) || !bytes.Contains(want.Bytes(), []byte("hermes_b_total")) {
				t.Fatalf("step %d: the scrape lacks hermes_a or hermes_b_total:\n%s", step, want.String())
			}
			checked++
		}
	}
	if checked < 100 {
		t.Fatalf("only %d scrapes compared", checked)
	}
}
