package backtest

import (
	"math"
	"strconv"
	"strings"

	"github.com/prometheus/prometheus/model/labels"
	"github.com/prometheus/prometheus/model/value"
	"github.com/prometheus/prometheus/promql/parser"
)

// seriesDesc parses one series description of promtool's notation: the
// series' labels and its values. Series files written by tools (a
// Prometheus export, internal/benchfleet) list every value as a plain
// number, and PromQL's generated parser (parser.ParseSeriesDesc) spends
// most of a large file's load on them, a token at a time. So a values
// string made only of plain decimal numbers, `_` and `stale` is read here,
// each number by strconv as the parser reads it (parser.number: a whole
// number through ParseInt and float64, any other through ParseFloat; both
// round to the nearest float64, so the results are the same bits); the
// labels still come from the library (ParseMetric). Anything else (an
// expansion such as `1+2x10`, a histogram, hex, a leading zero, which
// ParseInt reads as octal, Inf or NaN) goes to parser.ParseSeriesDesc
// whole. TestSeriesDescLikeLibrary and FuzzSeriesDesc check the two agree.
func seriesDesc(p parser.Parser, series, values string) (labels.Labels, []parser.SequenceValue, error) {
	if vals, ok := plainValues(values); ok {
		if lbls, err := p.ParseMetric(series); err == nil {
			return lbls, vals, nil
		}
	}
	return p.ParseSeriesDesc(series + " " + values)
}

// plainValues reads values when every token is `_`, `stale` or a plain
// decimal number; ok is false otherwise, or when there is no token.
func plainValues(values string) ([]parser.SequenceValue, bool) {
	// As many values as spaces, and one: the file's own separator, so
	// that out is allocated once (growing it was a sixth of the CPU of
	// loading a 100-route, 24 h file).
	out := make([]parser.SequenceValue, 0, strings.Count(values, " ")+1)
	for tok := range strings.FieldsFuncSeq(values, isSpace) {
		switch {
		case tok == "_":
			out = append(out, parser.SequenceValue{Omitted: true})
		case tok == "stale":
			out = append(out, parser.SequenceValue{Value: math.Float64frombits(value.StaleNaN)})
		case plainNumber(tok):
			f, err := strconv.ParseFloat(tok, 64)
			if err != nil {
				return nil, false // out of range: the library words the error
			}
			out = append(out, parser.SequenceValue{Value: f})
		default:
			return nil, false
		}
	}
	return out, len(out) > 0
}

// isSpace is what PromQL's lexer takes for space between values; other
// Unicode spaces are errors there.
func isSpace(r rune) bool { return r == ' ' || r == '\t' || r == '\n' || r == '\r' }

// plainNumber reports whether s is an optional minus, then 0 or digits not
// starting with 0, then optionally a fraction and an exponent.
func plainNumber(s string) bool {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	digits := func() int {
		start := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return i - start
	}
	start := i
	n := digits()
	if n == 0 || (n > 1 && s[start] == '0') {
		return false
	}
	if i < len(s) && s[i] == '.' {
		i++
		if digits() == 0 {
			return false
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		if digits() == 0 {
			return false
		}
	}
	return i == len(s)
}
