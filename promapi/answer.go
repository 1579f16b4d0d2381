package promapi

import (
	"fmt"
	"math"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/rules"
)

// Answer is one TickQuery's answer held by route position: a value per
// configured route and, for a signal with a volume or samples, the
// evidence behind it. A RouteQueryFunc fills it series by series (Add), so
// no answer is ever held as a vector of label maps; only a float and a
// count per route are kept until Collect builds the Samples.
//
// Series without a route label, or of routes not configured, are ignored;
// several series for one route make that route an error; Fail makes every
// route an error.
type Answer struct {
	index   map[string]int
	counted bool

	values, evidence []float64
	// nValues, nEvidence count the series seen per route position: 0 is
	// no data, more than 1 an error.
	nValues, nEvidence []int32
	// failed: the query failed, for reason.
	failed bool
	reason string
}

// newAnswer returns an Answer where no route of index (n routes) has data
// yet. When counted, series marked rules.PartEvidence are the evidence;
// otherwise every series is a value.
func newAnswer(index map[string]int, n int, counted bool) *Answer {
	a := &Answer{index: index, counted: counted, values: make([]float64, n), nValues: make([]int32, n)}
	if counted {
		a.evidence, a.nEvidence = make([]float64, n), make([]int32, n)
	}
	return a
}

// Add records one series of the answer: its route label, its
// rules.PartLabel ("" when absent) and its value.
func (a *Answer) Add(route, part string, v float64) {
	i, ok := a.index[route]
	if !ok {
		return
	}
	if a.counted && part == rules.PartEvidence {
		a.nEvidence[i]++
		a.evidence[i] = v
		return
	}
	a.nValues[i]++
	a.values[i] = v
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
