package promapi

import (
	"bytes"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestParseValueAsParseFloat: parseValue returns strconv.ParseFloat's bits,
// or fails where it fails, on values as Prometheus writes them and on
// random strings of the bytes a number is made of.
func TestParseValueAsParseFloat(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	var inputs []string
	for _, s := range []string{"", "0", "-0", "0.0", "-0.0", ".", "-", "5.", ".5", "-.5", "007", "1200", "0.01",
		"999999999999999", "9999999999999999", "0.000000000000001", "123456789012345.", "1.2.3", "1e3", "+1",
		"NaN", "+Inf", "-Inf", "0x1p-2", "1_0", "--1", "0.1234567890123456"} {
		inputs = append(inputs, s)
	}
	for range 20000 {
		// Values as Prometheus formats them (strconv 'f', -1).
		v := rng.Float64() * math.Pow(10, float64(rng.IntN(30)-15))
		if rng.IntN(4) == 0 {
			v = -v
		}
		inputs = append(inputs, strconv.FormatFloat(v, 'f', -1, 64))
		if rng.IntN(3) == 0 {
			inputs = append(inputs, strconv.FormatFloat(float64(rng.IntN(100000))/float64(1+rng.IntN(1000)), 'f', rng.IntN(8), 64))
		}
		// Random strings of digits, points and signs.
		var b strings.Builder
		for range rng.IntN(19) {
			b.WriteByte("0123456789.-+e"[rng.IntN(14)])
		}
		inputs = append(inputs, b.String())
	}
	for _, s := range inputs {
		got, err := parseValue([]byte(s))
		want, wantErr := strconv.ParseFloat(s, 64)
		if (err == nil) != (wantErr == nil) || err == nil && math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("parseValue(%q) = %v (%x), %v; ParseFloat %v (%x), %v", s, got, math.Float64bits(got), err, want, math.Float64bits(want), wantErr)
		}
	}
}

// TestFastSeriesAsScanner: where fastSeries reads a series, the scanner
// reads the same route, part and value from the same bytes and ends where
// it ends; on series as Prometheus writes them, fastSeries reads them.
// The series are Prometheus's form and that form cut, changed a byte at a
// time, and with bytes inserted.
func TestFastSeriesAsScanner(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	seeds := []string{
		`{"metric":{"route":"provider-1/model-2","signal_part":"value"},"value":[1700000000.123,"0.01"]}`,
		`{"metric":{"route":"a"},"value":[1700000000,"1200"]}`,
		`{"metric":{},"value":[1,"NaN"]}`,
		`{"metric":{"signal_part":"evidence_15m","route":"r","zone":"eu"},"value":[1.5e9,"-Inf"]}`,
		`{"metric":{"route":"a","route":"b"},"value":[0,"+Inf"]}`,
		`{"metric":{"__name__":"up","route":"x y"},"value":[-1,"3.25"]}`,
	}
	for _, seed := range seeds {
		if _, ok := fastSeries([]byte(seed + ",")); !ok {
			t.Errorf("fastSeries does not read %s", seed)
		}
	}
	const changed, inserted = "{}[]\",:\\ \x01\xc3.-0123456789aeEnul", "{}[]\",: \\\x1f.e0"
	fast := 0
	for n := range 200000 {
		b := []byte(seeds[n%len(seeds)])
		switch rng.IntN(4) {
		case 0:
			b[rng.IntN(len(b))] = changed[rng.IntN(len(changed))]
		case 1:
			i := rng.IntN(len(b))
			b = append(b[:i:i], append([]byte{inserted[rng.IntN(len(inserted))]}, b[i:]...)...)
		case 2:
			b = b[:rng.IntN(len(b))]
		}
		text := append(b, ",1]"...) // the array goes on: numbers and series need a byte after them
		f, ok := fastSeries(text)
		if !ok {
			continue
		}
		fast++
		s := newScanner(bytes.NewReader(text), len(text)+1)
		var labels seriesLabels
		v, hasValue := readSeries(s, &labels)
		if s.err != nil || !hasValue || labels.hasRoute != f.hasRoute || string(labels.route) != string(f.route) ||
			string(labels.part) != string(f.part) || math.Float64bits(v) != math.Float64bits(f.v) || s.pos != f.n {
			t.Fatalf("%s: fastSeries %+v, scanner route %q part %q value %v at %d, %v", text, f, labels.route, labels.part, v, s.pos, s.err)
		}
	}
	if fast < 10000 {
		t.Fatalf("fastSeries read only %d of the series", fast)
	}
}
