package promapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"

	jsoniter "github.com/json-iterator/go"

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
// tick. json-iterator's Iterator, already in the build as client_golang's
// own JSON library, streams the answer through a fixed buffer token by
// token without reflection: only the keys are allocated, as short
// strings; the route and part values are read into buffers reused from
// series to series (seriesLabels). Keys may come in any order (see
// readData).
func decodeAnswer(r io.Reader, maxSeries int, each func(route, part []byte, v float64)) (envelope, error) {
	var env envelope
	body := &readError{r: r}
	it := jsoniter.Parse(jsoniter.ConfigDefault, body, readBufferSize)
	var dataErr error
	it.ReadObjectCB(func(it *jsoniter.Iterator, key string) bool {
		switch fieldName(key, "status", "errorType", "error", "warnings", "data") {
		case "status":
			env.status = it.ReadString()
		case "errorType":
			env.errorType = it.ReadString()
		case "error":
			env.errorMsg = it.ReadString()
		case "warnings":
			it.ReadArrayCB(func(it *jsoniter.Iterator) bool {
				env.warnings = append(env.warnings, it.ReadString())
				return true
			})
		case "data":
			dataErr = readData(it, &env, maxSeries, each)
			return dataErr == nil
		default:
			it.Skip()
		}
		return true
	})
	switch {
	case body.err != nil:
		return env, body
	case dataErr != nil:
		return env, dataErr
	case it.Error != nil:
		return env, fmt.Errorf("decoding the answer: %w", it.Error)
	case it.WhatIsNext() != jsoniter.InvalidValue:
		return env, errors.New("decoding the answer: data after its end")
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
func readData(it *jsoniter.Iterator, env *envelope, maxSeries int, each func(route, part []byte, v float64)) error {
	var err error
	it.ReadObjectCB(func(it *jsoniter.Iterator, key string) bool {
		switch fieldName(key, "resultType", "result") {
		case "resultType":
			env.resultType = it.ReadString()
		case "result":
			if each == nil || (env.resultType != "" && env.resultType != "vector") {
				it.Skip()
				return true
			}
			err = readVector(it, env, maxSeries, each)
			return err == nil
		default:
			it.Skip()
		}
		return true
	})
	return err
}

// readVector reads an instant vector's series: {"metric": {...}, "value":
// [timestamp, "value"]}.
func readVector(it *jsoniter.Iterator, env *envelope, maxSeries int, each func(route, part []byte, v float64)) error {
	var err error
	var labels seriesLabels
	it.ReadArrayCB(func(it *jsoniter.Iterator) bool {
		env.series++
		if it.WhatIsNext() != jsoniter.ObjectValue || (maxSeries > 0 && env.series > maxSeries) {
			env.floatless = env.floatless || it.WhatIsNext() != jsoniter.ObjectValue
			it.Skip()
			return true
		}
		labels.reset()
		var v float64
		hasValue := false
		it.ReadObjectCB(func(it *jsoniter.Iterator, key string) bool {
			switch fieldName(key, "metric", "value") {
			case "metric":
				it.ReadObjectCB(func(it *jsoniter.Iterator, name string) bool {
					switch name {
					case RouteLabel:
						labels.route, labels.hasRoute = readLabel(it, labels.route), true
					case rules.PartLabel:
						labels.part = readLabel(it, labels.part)
					default:
						it.Skip()
					}
					return true
				})
			case "value":
				v, err = readSampleValue(it)
				hasValue = true
				return err == nil
			default: // "values" of a matrix, "histogram" among others
				it.Skip()
			}
			return true
		})
		if err != nil || it.Error != nil {
			return false
		}
		if !hasValue {
			env.floatless = true
		} else if labels.hasRoute {
			each(labels.route, labels.part, v)
		}
		return true
	})
	return err
}

// readSampleValue reads [timestamp, "value"], the value as Prometheus
// writes it: a decimal, "NaN", "+Inf" or "-Inf" (strconv.ParseFloat reads
// all of them).
func readSampleValue(it *jsoniter.Iterator) (float64, error) {
	var v float64
	var err error
	n := 0
	it.ReadArrayCB(func(it *jsoniter.Iterator) bool {
		n++
		switch n {
		case 1:
			it.Skip() // the evaluation time, which Hermes already knows
		case 2:
			if it.WhatIsNext() != jsoniter.StringValue {
				err = errors.New("a sample value that is not a string")
				return false
			}
			if v, err = strconv.ParseFloat(string(it.ReadStringAsSlice()), 64); err != nil {
				err = fmt.Errorf("a sample value: %w", err)
				return false
			}
		default:
			err = errors.New("a sample of more than a timestamp and a value")
			return false
		}
		return true
	})
	if err == nil && it.Error == nil && n != 2 {
		err = errors.New("a sample without a timestamp and a value")
	}
	return v, err
}

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
// JSON string. json-iterator differs on bytes that are not valid UTF-8 and
// on unpaired surrogate escapes, which encoding/json turns into U+FFFD: a
// label value must read the same whichever decoded the answer
// (FuzzDecodeAnswer). A plain value, the usual one, is taken as it is,
// shifted over its opening quote so that buf keeps its capacity.
func readLabel(it *jsoniter.Iterator, buf []byte) []byte {
	if buf == nil {
		buf = make([]byte, 0, 64) // json-iterator captures into a buffer, never into nil
	}
	raw := it.SkipAndAppendBytes(buf[:0])
	if it.Error != nil {
		return raw[:0]
	}
	if n := len(raw); n >= 2 && raw[0] == '"' && raw[n-1] == '"' && bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		return raw[:copy(raw, raw[1:n-1])]
	}
	var v string
	if err := json.Unmarshal(raw, &v); err != nil {
		it.ReportError("label value", err.Error())
		return raw[:0]
	}
	return append(raw[:0], v...)
}

// fieldName is the one of names that an object's key names, matched as
// encoding/json matches keys to a struct's fields, which is how
// client_golang decodes the same answer: exactly, else without regard to
// case (strings.EqualFold, Unicode simple folding). It is key itself when
// none matches. Label names are a map's keys there, matched exactly.
func fieldName(key string, names ...string) string {
	for _, n := range names {
		if key == n {
			return n
		}
	}
	for _, n := range names {
		if strings.EqualFold(key, n) {
			return n
		}
	}
	return key
}
