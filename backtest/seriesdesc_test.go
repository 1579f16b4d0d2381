package backtest

import (
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/promql/parser"
	"go.yaml.in/yaml/v3"
)

// sameSeriesDesc fails unless seriesDesc reads series and values as
// parser.ParseSeriesDesc does: the same labels, values bit for bit, or
// both an error.
func sameSeriesDesc(t *testing.T, series, values string) {
	t.Helper()
	p := parser.NewParser(parser.Options{})
	wl, wv, werr := p.ParseSeriesDesc(series + " " + values)
	gl, gv, gerr := seriesDesc(p, series, values)
	if (werr != nil) != (gerr != nil) {
		t.Fatalf("%s %q: error %v, the library's %v", series, values, gerr, werr)
	}
	if werr != nil {
		return
	}
	if !labels.Equal(gl, wl) || len(gv) != len(wv) {
		t.Fatalf("%s %q: %s with %d values, the library's %s with %d", series, values, gl, len(gv), wl, len(wv))
	}
	for i := range wv {
		if gv[i].Omitted != wv[i].Omitted || math.Float64bits(gv[i].Value) != math.Float64bits(wv[i].Value) || (gv[i].Histogram == nil) != (wv[i].Histogram == nil) {
			t.Fatalf("%s %q: value %d is %+v, the library's %+v", series, values, i, gv[i], wv[i])
		}
	}
}

// TestSeriesDescLikeLibrary reads every series of every scenario, edge
// cases of the number syntax, and random value strings both ways.
func TestSeriesDescLikeLibrary(t *testing.T) {
	files, err := filepath.Glob("../testdata/scenarios/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("scenarios: %v %v", files, err)
	}
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var raw seriesFile
		if err := yaml.Unmarshal(data, &raw); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		for _, in := range raw.InputSeries {
			sameSeriesDesc(t, in.Series, in.Values)
			n++
		}
	}
	if n < 100 {
		t.Fatalf("only %d scenario series", n)
	}
	s := `{__name__="x", route="free"}`
	for _, v := range []string{
		"0 1 2", "-0 0 -1", "010 10", "0x1f 3", "1e3 1E-3 2.5e+2", "1. .5", "+5 5", "1_000 2", "Inf -Inf NaN", "stale _ 3 _x2",
		"1+2x3", "1e400", "-1e400", "99999999999999999999 9223372036854775807 9223372036854775808", "4.9e-324 2.2250738585072014e-308",
		"0.1 0.30000000000000004 123456789.123456789", "", "   ", "1 2 x", "{{schema:0 sum:1 count:1}}", "1 -", "stale stale", "0\v", "1\u00a02", "1\t2\r\n3",
	} {
		sameSeriesDesc(t, s, v)
	}
	sameSeriesDesc(t, `{route="free"`, "1 2")
	sameSeriesDesc(t, `x{route="free"}`, "1 2")
	rng := rand.New(rand.NewPCG(1, 2))
	toks := []string{"_", "stale", "0", "-0", "07", "1.5", "-2.25e3", "1e", "3x2", "+1", "1+1x2", "Inf", "1e-400"}
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(8) {
			if rng.IntN(3) == 0 {
				b.WriteString(toks[rng.IntN(len(toks))])
			} else {
				b.WriteString(strconv.FormatFloat(rng.NormFloat64()*math.Pow(10, float64(rng.IntN(40)-20)), 'g', -1, 64))
			}
			b.WriteByte(' ')
		}
		sameSeriesDesc(t, s, b.String())
	}
}

// FuzzSeriesDesc: whatever the values, seriesDesc reads them as the
// library does.
func FuzzSeriesDesc(f *testing.F) {
	for _, v := range []string{"0 1 2", "-0 _ stale", "1+2x3", "1e3 07"} {
		f.Add(v)
	}
	f.Fuzz(func(t *testing.T, values string) {
		sameSeriesDesc(t, `{__name__="x", route="free"}`, values)
	})
}
