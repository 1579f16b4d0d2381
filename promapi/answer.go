package promapi

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/rules"
)

// Answer is one TickQuery's answer held by route position: a value per
// configured route and, for a signal with a volume or samples, the
// evidence behind it, and for a signal with windows each window's value
// and evidence. A RouteQueryFunc fills it series by series (Add), so no
// answer is ever held as a vector of label maps; only a float and a count
// per route and part are kept until Collect builds the Samples.
//
// Series without a route label, or of routes not configured, are ignored;
// several series for one route and part make that route an error; Fail
// makes every route an error.
type Answer struct {
	routes  routeFinder
	counted bool

	values, evidence []float64
	// nValues, nEvidence count the series seen per route position: 0 is
	// no data, more than 1 an error.
	nValues, nEvidence []int32
	// windows are the signal's windows' parts, in its windows' order.
	windows []windowParts
	// failed: the query failed, for reason.
	failed bool
	reason string
}

// windowParts is the answer's parts over one of the signal's windows:
// their rules.PartLabel values and, per route position, what they
// answered (as values and evidence above).
type windowParts struct {
	valuePart, evidencePart string
	values, evidence        []float64
	nValues, nEvidence      []int32
}

// newAnswer returns an Answer where no route of routes has data yet. When counted, series marked rules.PartEvidence are the evidence,
// and those marked with the parts of windows (rules.WindowPart) that
// window's value and evidence; otherwise every series is a value.
func newAnswer(routes *routePositions, counted bool, windows []time.Duration) *Answer {
	n := len(routes.names)
	a := &Answer{routes: newRouteFinder(routes), counted: counted, values: make([]float64, n), nValues: make([]int32, n)}
	if counted {
		a.evidence, a.nEvidence = make([]float64, n), make([]int32, n)
		for _, w := range windows {
			a.windows = append(a.windows, windowParts{
				valuePart: rules.WindowPart(rules.PartValue, w), evidencePart: rules.WindowPart(rules.PartEvidence, w),
				values: make([]float64, n), evidence: make([]float64, n), nValues: make([]int32, n), nEvidence: make([]int32, n)})
		}
	}
	return a
}

// fits reports whether a is the Answer newAnswer would make for a query
// with counted and windows (over the same routes), so reset can serve
// again.
func (a *Answer) fits(counted bool, windows []time.Duration) bool {
	if a.counted != counted || counted && len(a.windows) != len(windows) {
		return false
	}
	for k := range a.windows {
		if a.windows[k].valuePart != rules.WindowPart(rules.PartValue, windows[k]) {
			return false
		}
	}
	return true
}

// reset makes a an answer where no route has data yet, as newAnswer
// does, keeping its slots and the order its routes came in.
func (a *Answer) reset() {
	a.routes.prev = -1
	clear(a.values)
	clear(a.nValues)
	clear(a.evidence)
	clear(a.nEvidence)
	for k := range a.windows {
		w := &a.windows[k]
		clear(w.values)
		clear(w.nValues)
		clear(w.evidence)
		clear(w.nEvidence)
	}
	a.failed, a.reason = false, ""
}

// Add records one series of the answer: its route label, its
// rules.PartLabel ("" when absent) and its value. In a counted answer, a
// series of a window part that the signal does not declare is ignored: it
// is no second value.
func (a *Answer) Add(route, part string, v float64) { addSeries(a, route, part, v) }

// addBytes is Add for a decoder's buffers (decodeAnswer): the route is
// looked up, and the part compared, without a string made of either.
func (a *Answer) addBytes(route, part []byte, v float64) { addSeries(a, route, part, v) }

// addSeries is Add over either form of the labels: Go converts a []byte
// to a string without a copy where the string is only a map key or
// compared.
func addSeries[S string | []byte](a *Answer, route, part S, v float64) {
	i, ok := find(&a.routes, route)
	if !ok {
		return
	}
	switch {
	case !a.counted || len(part) == 0 || string(part) == rules.PartValue:
		a.nValues[i]++
		a.values[i] = v
	case string(part) == rules.PartEvidence:
		a.nEvidence[i]++
		a.evidence[i] = v
	default:
		for k := range a.windows {
			switch w := &a.windows[k]; string(part) {
			case w.valuePart:
				w.nValues[i]++
				w.values[i] = v
				return
			case w.evidencePart:
				w.nEvidence[i]++
				w.evidence[i] = v
				return
			}
		}
		if p := string(part); !strings.HasPrefix(p, rules.PartValue+"_") && !strings.HasPrefix(p, rules.PartEvidence+"_") {
			a.nValues[i]++
			a.values[i] = v
		}
	}
}

// Fail makes every route an error with the reason of err (ErrorReason),
// whatever was added before.
func (a *Answer) Fail(err error) { a.failed, a.reason = true, ErrorReason(err) }

// sample is the route at position i: its value with the count behind it.
func (a *Answer) sample(i int) evaluator.Sample {
	if a.failed {
		return evaluator.Sample{Value: math.NaN(), Status: evaluator.StatusError, Reason: a.reason}
	}
	s := seriesSample(a.values[i], a.nValues[i])
	if a.evidence == nil {
		return s
	}
	return withVolume(s, seriesSample(a.evidence[i], a.nEvidence[i]))
}

// windowSample is the route at position i over the signal's k-th window:
// its value with the calls behind it, as sample. A window without data is
// missing, which the core reads as no further evidence.
func (a *Answer) windowSample(k, i int) evaluator.Sample {
	if a.failed {
		return evaluator.Sample{Value: math.NaN(), Status: evaluator.StatusError, Reason: a.reason}
	}
	w := &a.windows[k]
	return withVolume(seriesSample(w.values[i], w.nValues[i]), seriesSample(w.evidence[i], w.nEvidence[i]))
}

// NoCalls is the reason of a counted signal whose route had no calls in
// the window.
const NoCalls = "no calls"

// seriesSample classifies what n series answered for one route, the last
// with value v.
func seriesSample(v float64, n int32) evaluator.Sample {
	switch {
	case n == 0:
		return evaluator.Sample{Value: math.NaN(), Status: evaluator.StatusMissing, Reason: "no data"}
	case n > 1:
		return evaluator.Sample{Value: math.NaN(), Status: evaluator.StatusError, Reason: fmt.Sprintf("%d series for one route", n)}
	}
	return valueSample(v)
}

// withVolume adds the count behind a signal's value. A value without its
// count is no evidence: a failed count query makes the signal an error, a
// missing count makes it missing, each with a reason naming the count. A
// value missing beside a count of 0 is a route without calls in the
// window (its counters are there and flat): missing, counted, of volume
// 0, which the core reads as idle, not blind.
func withVolume(s, count evaluator.Sample) evaluator.Sample {
	if s.Status == evaluator.StatusMissing && count.Status == evaluator.StatusOK && count.Value == 0 {
		return evaluator.Sample{Value: math.NaN(), Status: evaluator.StatusMissing, Reason: NoCalls, Counted: true}
	}
	if s.Status != evaluator.StatusOK {
		return s
	}
	if count.Status != evaluator.StatusOK {
		return evaluator.Sample{Value: math.NaN(), Status: count.Status, Reason: "count: " + count.Reason}
	}
	s.Volume, s.Counted = count.Value, true
	return s
}

// valueSample classifies one value: finite is OK, NaN and ±Inf are missing.
func valueSample(v float64) evaluator.Sample {
	switch {
	case math.IsNaN(v):
		return evaluator.Sample{Value: v, Status: evaluator.StatusMissing, Reason: "NaN"}
	case math.IsInf(v, 0):
		return evaluator.Sample{Value: v, Status: evaluator.StatusMissing, Reason: "Inf"}
	}
	return evaluator.Sample{Value: v, Status: evaluator.StatusOK}
}
