package backtest

import (
	"math"
	"strings"
	"testing"

	"github.com/hermes-failover/hermes/internal/testenv"
)

// TestTenYearIntervalIsRefused replays three samples ten years apart: the
// 63 million ticks of 15 s are refused at once, with what to change,
// instead of running for ever.
func TestTenYearIntervalIsRefused(t *testing.T) {
	f, err := Parse([]byte("interval: 10y\ninput_series: [{series: up, values: '1 2 3'}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, err = Run(t.Context(), testenv.DefaultPolicy(t), b.Query, b.Start(), b.End(), Options{})
	if err == nil || !strings.Contains(err.Error(), "ticks, more than the 2200000 a backtest may take") {
		t.Fatalf("Run over 20 years of 15 s ticks: %v", err)
	}
}

func TestCountValues(t *testing.T) {
	for in, want := range map[string]int64{
		"":                   0,
		"1 2 3":              3,
		"0+1x100000000":      100000001,
		"_x3 1x2 stale":      3 + 3 + 1,
		"1+1x bogus 2-1x-4":  3,
		"1x9223372036854775": 9223372036854776,
		// Past int64 and past uint64: saturated, never wrapped negative
		// nor counted as one word (issue 31, item 6).
		"0+0x9223372036854775807":   math.MaxInt64,
		"0+0x18446744073709551615":  math.MaxInt64,
		"_x9223372036854775807":     math.MaxInt64,
		"1 0+0x9223372036854775806": math.MaxInt64,
		"0+0x99999999999999999999":  math.MaxInt64,
		// Two expansions in one word, which PromQL's lexer reads as two
		// (found by FuzzParse: the second hid a count of 914 million).
		"1+2x3+4x5":                   4 + 6,
		"112450+300x914150040+300x91": 914150041 + 92,
		"_x2+1x3":                     2 + 4,
	} {
		if got := countValues(in); got != want {
			t.Errorf("countValues(%q) = %d, want %d", in, got, want)
		}
	}
}

// TestValuesInTheSeriesFieldAreBounded: values written into `series:`
// (the parser reads series and values as one text) count like those of
// `values:`, so `0+0x20000000` there is refused before it is expanded.
func TestValuesInTheSeriesFieldAreBounded(t *testing.T) {
	for _, series := range []string{`x{route="free"} 0+0x20000000`, `x 1 0+0x20000000`, `x 0+0x9223372036854775807`, `x 0+0x18446744073709551615`} {
		f, err := Parse([]byte("input_series: [{series: '" + series + "'}]\n"))
		if err == nil {
			var b *Store
			if b, err = Open(f); err == nil {
				b.Close()
			}
		}
		if err == nil || !strings.Contains(err.Error(), "more than the 2200000 one series may have") {
			t.Errorf("series %q: %v", series, err)
		}
	}
}
