package backtest

import (
	"strings"
	"testing"
)

// FuzzParse feeds the series loader arbitrary files (seeds in
// testdata/fuzz/FuzzParse, made from the scenarios). Nothing may panic,
// nothing beyond MaxSamples may load, and what Parse accepts Open must
// load, unless it holds no sample at all (series whose values are all
// gaps, or none), which Open refuses by name.
func FuzzParse(f *testing.F) {
	f.Add([]byte("interval: 15s\ninput_series: [{series: 'up{route=\"free\"}', values: '0+1x10 _ stale'}]\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := Parse(data)
		if err != nil {
			return
		}
		n := 0
		for _, s := range file.Series {
			n += len(s.Samples)
		}
		if n > MaxSamples {
			t.Fatalf("loaded %d samples, more than MaxSamples", n)
		}
		b, err := Open(file)
		if n == 0 && err != nil && strings.Contains(err.Error(), "no samples") {
			return
		}
		if err != nil {
			t.Fatalf("Open refuses what Parse accepted: %v", err)
		}
		b.Close()
	})
}
