package backtest

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Bounds of a backtest, so a small file cannot exhaust memory or run for
// ever: `0+1x100000000` in a 90-byte file would expand to 1.6 GB of
// samples, and `interval: 10y` to millions of ticks.
const (
	// MaxSamples bounds the samples of a series file, over all its series.
	// Loaded, they are compressed to one to three bytes each (chunks.go):
	// a day of 15 s samples of 3,400 series, 60 MB at most.
	MaxSamples = 20_000_000
	// MaxSeriesSamples bounds the samples of one series, which are
	// expanded (40 bytes each: 88 MB) before they are compressed: a year
	// of 15 s samples.
	MaxSeriesSamples = 2_200_000
	// MaxTicks bounds the ticks of one backtest (a year of 15 s ticks is
	// about 2.1 million).
	MaxTicks = 2_200_000
	// maxUnixSeconds is 9999-12-31T23:59:59Z, the last time RFC 3339
	// can write; later times overflow Unix milliseconds soon after.
	maxUnixSeconds = 253402300799
)

// countValues returns how many values the promtool expanding notation of
// values describes (`a+bxN` and `axN` are N+1 values, `_xN` N, any other
// word one), without expanding it, so a huge count is refused before the
// parser allocates it. A word with several expansions in it
// (`1+2x3+4x5`, which PromQL's lexer reads as two) counts every one. A
// word it cannot read counts one: the parser then reports it. A count
// past math.MaxInt64 is math.MaxInt64.
func countValues(values string) int64 {
	var n int64
	for _, w := range strings.Fields(values) {
		c := wordValues(w)
		if c > math.MaxInt64-n {
			return math.MaxInt64
		}
		if n += c; n > math.MaxInt32 {
			return n
		}
	}
	return n
}

// wordValues is countValues of one word: the sum over each `x` followed by
// digits in it of the count it repeats (plus one, unless what comes before
// that `x` in the word is `_`), or 1 when it has none. Counting every `x`
// can only count more than the parser expands (`0x1F`, a hex number, is
// counted 2), never less.
func wordValues(w string) int64 {
	var n uint64
	counted := false
	for from := 0; ; {
		i := strings.IndexByte(w[from:], 'x')
		if i < 0 {
			break
		}
		before, rest := w[from:from+i], w[from+i+1:]
		from += i + 1
		digits := 0
		for digits < len(rest) && '0' <= rest[digits] && rest[digits] <= '9' {
			digits++
		}
		if digits == 0 {
			continue
		}
		// PromQL's parser reads the count as an unsigned 64-bit number:
		// one past int64 (or past uint64, which it refuses) is still a
		// count to refuse, not a word to count once. The sum saturates
		// at math.MaxInt64 instead of wrapping negative.
		times, err := strconv.ParseUint(rest[:digits], 10, 64)
		if err != nil {
			return math.MaxInt64
		}
		if before != "_" {
			if times == math.MaxUint64 {
				return math.MaxInt64
			}
			times++
		}
		if times > math.MaxInt64-n {
			return math.MaxInt64
		}
		n += times
		counted = true
	}
	if !counted {
		return 1
	}
	return int64(n)
}

// checkTicks refuses a backtest of more than MaxTicks ticks.
func checkTicks(from, to time.Time, step time.Duration) error {
	if ticks := to.Sub(from) / step; to.After(from) && ticks > MaxTicks {
		return fmt.Errorf("%s to %s at evaluation_interval %s is %d ticks, more than the %d a backtest may take; shorten the series or raise evaluation_interval",
			from.UTC().Format(time.RFC3339), to.UTC().Format(time.RFC3339), step, ticks, MaxTicks)
	}
	return nil
}

// seriesTail is what follows the metric name and label set in a series
// field: the parser reads series and values as one text, so values
// written there must be counted as well.
func seriesTail(series string) string {
	if i := strings.LastIndexByte(series, '}'); i >= 0 {
		return series[i+1:]
	}
	if f := strings.Fields(series); len(f) > 1 {
		return strings.Join(f[1:], " ")
	}
	return ""
}
