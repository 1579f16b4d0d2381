package promapi

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/hermes-failover/hermes/labelname"
	"github.com/hermes-failover/hermes/rules"
)

// envelope is what decodeAnswer reads of an /api/v1/query answer besides
// its series.
type envelope struct {
	status, errorType, errorMsg string
	warnings                    []string
	resultType                  string
	// series counts the series of the result, with or without a route.
	series int
	// floatless: a series of the result had no float value (a matrix read
	// before its resultType, or a native histogram).
	floatless bool
}

// malformed begins the message of an answer that is not the JSON of
// Prometheus's API, whichever path decoded it (Client.Query says the same
// of client_golang's complaints); what follows is the decoder's own words.
const malformed = "malformed answer: "

// readBufferSize is how much of an answer decodeAnswer holds at a time.
const readBufferSize = 32 << 10

// decodeAnswer reads an /api/v1/query answer from r (the Prometheus JSON
// envelope: status, data.resultType, data.result, errorType, error,
// warnings) and hands each series of an instant vector to each: its route
// label, its rules.PartLabel (empty when absent) and its value, NaN and
// ±Inf included as Prometheus writes them ("NaN", "+Inf", "-Inf"); a
// series without a route label is counted but not handed over. The route
// and part are decodeAnswer's buffers, valid only during the call. Past maxSeries
// series (0: no bound) the rest are only counted. A nil each skips the
// result. A failure to read r is returned as a *readError, bad JSON as
// another error.
//
// Why not client_golang's decoding: it reads the whole answer, then builds
// a model.Metric map per series through reflection, about 5 MB of garbage
// per signal at 10,000 routes, which made Hermes's memory peak once a
// tick. decodeAnswer streams the answer through a fixed buffer (scanner)
// and allocates nothing per series: the route and part values are read
// into buffers reused from series to series (seriesLabels). Keys may come
// in any order (see readData).
func decodeAnswer(r io.Reader, maxSeries int, each func(route, part []byte, v float64)) (envelope, error) {
	return decodeAnswerSize(r, readBufferSize, maxSeries, each)
}

// decodeAnswerSize is decodeAnswer through a buffer of size bytes.
func decodeAnswerSize(r io.Reader, size, maxSeries int, each func(route, part []byte, v float64)) (envelope, error) {
	var env envelope
	body := &readError{r: r}
	s := newScanner(body, size)
	if s.openObject() {
		for first := true; s.member(first); first = false {
			switch fieldName(s.key, "status", "errorType", "error", "warnings", "data") {
			case "status":
				env.status = s.text()
			case "errorType":
				env.errorType = s.text()
			case "error":
				env.errorMsg = s.text()
			case "warnings":
				if s.openArray() {
					for first := true; s.element(first); first = false {
						env.warnings = append(env.warnings, s.text())
					}
				}
			case "data":
				readData(s, &env, maxSeries, each)
			default:
				s.skip()
			}
		}
	}
	switch {
	case body.err != nil:
		return env, body
	case s.err != nil:
		return env, fmt.Errorf("%s%w", malformed, s.err)
	case s.more():
		return env, errors.New(malformed + "data after its end")
	}
	return env, nil
}

// readError is a failure to read an answer (a broken connection, a
// timeout, ErrResponseTooLarge), as opposed to an answer that is not what
// Prometheus writes. It wraps the reader, recording the first error other
// than io.EOF.
type readError struct {
	r   io.Reader
	err error
}

func (e *readError) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && err != io.EOF && e.err == nil {
		e.err = err
	}
	return n, err
}

func (e *readError) Error() string { return "reading the answer: " + e.err.Error() }
func (e *readError) Unwrap() error { return e.err }

// readData reads the data object of an answer: its resultType and, for a
// vector, the series of its result. A result met before its resultType
// (JSON keys have no order; encoding/json writes them sorted) is read as a
// vector; what is not one is skipped and marked (envelope.floatless), and
// its resultType, read after, says what it was.
func readData(s *scanner, env *envelope, maxSeries int, each func(route, part []byte, v float64)) {
	if !s.openObject() {
		return
	}
	for first := true; s.member(first); first = false {
		switch fieldName(s.key, "resultType", "result") {
		case "resultType":
			env.resultType = s.text()
		case "result":
			if each == nil || (env.resultType != "" && env.resultType != "vector") {
				s.skip()
				continue
			}
			readVector(s, env, maxSeries, each)
		default:
			s.skip()
		}
	}
}

// readVector reads an instant vector's series: {"metric": {...}, "value":
// [timestamp, "value"]}.
func readVector(s *scanner, env *envelope, maxSeries int, each func(route, part []byte, v float64)) {
	if !s.openArray() {
		return
	}
	var labels seriesLabels
	for first := true; s.element(first); first = false {
		env.series++
		if c := s.peek(); c != '{' || (maxSeries > 0 && env.series > maxSeries) {
			env.floatless = env.floatless || c != '{'
			s.skip()
			continue
		}
		if f, ok := fastSeries(s.buf[s.pos:s.end]); ok {
			s.pos += f.n
			if f.hasRoute {
				each(f.route, f.part, f.v)
			}
			continue
		}
		v, hasValue := readSeries(s, &labels)
		switch {
		case s.err != nil:
			return
		case !hasValue:
			env.floatless = true
		case labels.hasRoute:
			each(labels.route, labels.part, v)
		}
	}
}

// readSeries reads one series object with the scanner into labels (reset
// first), and its value when it has one: the path for a series fastSeries
// does not read.
func readSeries(s *scanner, labels *seriesLabels) (v float64, hasValue bool) {
	labels.reset()
	s.openObject()
	for first := true; s.member(first); first = false {
		switch fieldName(s.key, "metric", "value") {
		case "metric":
			readMetric(s, labels)
		case "value":
			v, hasValue = readSampleValue(s), true
		default: // "values" of a matrix, "histogram" among others
			s.skip()
		}
	}
	return v, hasValue
}

// readMetric reads a series' labels, keeping its route and part. Label
// names are a map's keys in client_golang's decoding, matched exactly.
func readMetric(s *scanner, labels *seriesLabels) {
	if !s.openObject() {
		return
	}
	for first := true; s.member(first); first = false {
		switch string(s.key) {
		case labelname.Route:
			labels.route, labels.hasRoute = readLabel(s, labels.route), true
		case rules.PartLabel:
			labels.part = readLabel(s, labels.part)
		default:
			s.skip()
		}
	}
}

// readSampleValue reads [timestamp, "value"], the value as Prometheus
// writes it: a decimal, "NaN", "+Inf" or "-Inf" (strconv.ParseFloat reads
// all of them), read from the bytes between the quotes as client_golang
// reads it (model.SampleValue).
func readSampleValue(s *scanner) float64 {
	var v float64
	n := 0
	if s.openArray() {
		for first := true; s.element(first); first = false {
			n++
			switch n {
			case 1:
				s.skip() // the evaluation time, which Hermes already knows
			case 2:
				if s.peek() != '"' {
					s.fail("a sample value that is not a string")
					return 0
				}
				raw, _, _ := s.str()
				if s.err != nil {
					return 0
				}
				var err error
				if v, err = parseValue(raw); err != nil {
					s.fail("a sample value: %v", err)
					return 0
				}
			default:
				s.fail("a sample of more than a timestamp and a value")
				return 0
			}
		}
	}
	if s.err == nil && n != 2 {
		s.fail("a sample without a timestamp and a value")
	}
	return v
}

// parseValue is strconv.ParseFloat of a sample value's bytes. A decimal
// of up to 15 digits, with a sign and a point or without (as counts and
// ratios are: "1200", "0.01"), is converted without making a string of
// it: its digits m are exact in a float64, and so is 10^k for its k
// digits after the point, so m / 10^k is the one rounding of the decimal,
// which is what ParseFloat returns (its own exact fast path, Clinger's).
// TestParseValueAsParseFloat holds the two to the same bits.
func parseValue(raw []byte) (float64, error) {
	digits := raw
	neg := len(digits) > 0 && digits[0] == '-'
	if neg {
		digits = digits[1:]
	}
	if n := len(digits); n > 0 && n <= 16 {
		var m uint64
		point, seen := -1, 0
		for i, c := range digits {
			switch {
			case '0' <= c && c <= '9':
				m = m*10 + uint64(c-'0')
				seen++
			case c == '.' && point < 0:
				point = i
			default:
				return strconv.ParseFloat(string(raw), 64)
			}
		}
		if seen > 0 && seen <= 15 {
			v := float64(m)
			if point >= 0 {
				v /= pow10[len(digits)-1-point]
			}
			if neg {
				v = -v
			}
			return v, nil
		}
	}
	return strconv.ParseFloat(string(raw), 64)
}

// pow10 are the powers of ten that parseValue divides by, each exact in a
// float64.
var pow10 = [...]float64{1, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15}

// seriesLabels are the labels readVector keeps of a series: the values
// of its route and part labels, each in a buffer reused from series to
// series, so that reading them allocates nothing once the buffers have
// grown to the longest value (Answer.Add looks the route up by its bytes).
type seriesLabels struct {
	route, part []byte
	hasRoute    bool
}

// reset makes l the labels of a series without any.
func (l *seriesLabels) reset() {
	l.route, l.part, l.hasRoute = l.route[:0], l.part[:0], false
}

// readLabel reads a label value into buf, replacing what it held, and
// returns it: the value as encoding/json (and so client_golang) decodes a
// JSON string, null as "" (a label value must read the same whichever
// decoded the answer: FuzzDecodeAnswer).
func readLabel(s *scanner, buf []byte) []byte {
	if s.peek() == 'n' {
		s.literal("null")
		return buf[:0]
	}
	if s.peek() != '"' {
		s.fail("a label value that is not a string")
		return buf[:0]
	}
	raw, esc, wide := s.str()
	if s.err != nil {
		return buf[:0]
	}
	v, err := unescaped(buf[:0], raw, esc, wide)
	if err != nil {
		s.fail("a label value: %v", err)
	}
	return v
}

// fieldName is the one of names that an object's key names, matched as
// encoding/json matches keys to a struct's fields, which is how
// client_golang decodes the same answer: exactly, else without regard to
// case (bytes.EqualFold, Unicode simple folding); "" when none matches.
// Label names are a map's keys there, matched exactly.
func fieldName(key []byte, names ...string) string {
	for _, n := range names {
		if string(key) == n {
			return n
		}
	}
	for _, n := range names {
		if bytes.EqualFold(key, []byte(n)) {
			return n
		}
	}
	return ""
}
