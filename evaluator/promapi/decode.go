package promapi

import (
	"errors"
	"fmt"
	"strconv"

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
}

// decodeAnswer reads an /api/v1/query answer (the Prometheus JSON
// envelope: status, data.resultType, data.result, errorType, error,
// warnings) and hands each series of an instant vector to each: its route
// label, its rules.PartLabel ("" when absent) and its value, NaN and ±Inf
// included as Prometheus writes them ("NaN", "+Inf", "-Inf"); a series
// without a route label is counted but not handed over. Past maxSeries
// series (0: no bound) the rest are only counted.
//
// Why not client_golang's decoding: it builds a model.Metric map per series
// through reflection, about 5 MB of garbage per signal at 10,000 routes,
// which made Hermes's memory peak once a tick. json-iterator's Iterator,
// already in the build as client_golang's own JSON library, walks the
// answer token by token without reflection: only the label names and the
// route and part values are allocated, as short strings. Keys may come in
// any order (see readData).
func decodeAnswer(body []byte, maxSeries int, each func(route, part string, v float64)) (envelope, error) {
	env, err := readEnvelope(body, maxSeries, each)
	if err != nil && env.resultType != "vector" {
		// Perhaps a result of another type, met before its resultType.
		if other, err2 := readEnvelope(body, 0, nil); err2 == nil && other.resultType != "vector" {
			return other, nil
		}
	}
	return env, err
}

// readEnvelope is one pass of decodeAnswer; with a nil each it skips the
// result.
func readEnvelope(body []byte, maxSeries int, each func(route, part string, v float64)) (envelope, error) {
	var env envelope
	it := jsoniter.ConfigDefault.BorrowIterator(body)
	defer jsoniter.ConfigDefault.ReturnIterator(it)
	var bodyErr error
	it.ReadObjectCB(func(it *jsoniter.Iterator, field string) bool {
		switch field {
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
			bodyErr = readData(it, &env, maxSeries, each)
			return bodyErr == nil
		default:
			it.Skip()
		}
		return true
	})
	if bodyErr != nil {
		return env, bodyErr
	}
	if it.Error != nil {
		return env, fmt.Errorf("decoding the answer: %w", it.Error)
	}
	if it.WhatIsNext() != jsoniter.InvalidValue {
		return env, errors.New("decoding the answer: data after its end")
	}
	return env, nil
}

// readData reads the data object of an answer: its resultType and, for a
// vector, the series of its result. A result met before its resultType
// (JSON keys have no order; encoding/json writes them sorted) is read as a
// vector: if it is something else, reading fails, and decodeAnswer reads
// the envelope again, skipping the result, to say what it was.
func readData(it *jsoniter.Iterator, env *envelope, maxSeries int, each func(route, part string, v float64)) error {
	var err error
	it.ReadObjectCB(func(it *jsoniter.Iterator, field string) bool {
		switch field {
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
func readVector(it *jsoniter.Iterator, env *envelope, maxSeries int, each func(route, part string, v float64)) error {
	var err error
	it.ReadArrayCB(func(it *jsoniter.Iterator) bool {
		env.series++
		if maxSeries > 0 && env.series > maxSeries {
			it.Skip()
			return true
		}
		var route, part string
		var v float64
		hasRoute, hasValue := false, false
		it.ReadObjectCB(func(it *jsoniter.Iterator, field string) bool {
			switch field {
			case "metric":
				it.ReadObjectCB(func(it *jsoniter.Iterator, name string) bool {
					switch name {
					case RouteLabel:
						route, hasRoute = it.ReadString(), true
					case rules.PartLabel:
						part = it.ReadString()
					default:
						it.Skip()
					}
					return true
				})
			case "value":
				v, err = readSampleValue(it)
				hasValue = true
				return err == nil
			default: // "histogram" among others
				it.Skip()
			}
			return true
		})
		if err != nil || it.Error != nil {
			return false
		}
		if !hasValue {
			err = errors.New("a series without a float value (a native histogram?): signal queries must return floats")
			return false
		}
		if hasRoute {
			each(route, part, v)
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
			s := it.ReadStringAsSlice()
			if v, err = strconv.ParseFloat(string(s), 64); err != nil {
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
