package evaluator

import (
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Actuation results.
const (
	ActuationApplied = "applied" // the backend took a new split
	ActuationFailed  = "failed"  // an apply failed after the actuator was fine
)

// Actuation is an actuator's apply worth marking on a chart: one that
// changed the split its backend holds for a service, or the first that
// failed. The live loop re-asserts every tick; the applies that change
// nothing are not Actuations.
type Actuation struct {
	Time     time.Time `json:"time"`
	Actuator string    `json:"actuator"`
	// Service is the service whose split changed; for a failure, one the
	// actuator held before, or empty when it never held one.
	Service string `json:"service,omitempty"`
	// Weights is the split the backend holds after the apply (percent by
	// route); empty for a failure.
	Weights map[string]int `json:"weights,omitempty"`
	Result  string         `json:"result"`
	// Error is why the apply failed, when the process that saw it tells.
	Error string `json:"error,omitempty"`
}

// String says what happened, for a tooltip or a log line.
func (a Actuation) String() string {
	if a.Result == ActuationFailed {
		msg := "actuator " + a.Actuator + " failed"
		if a.Service != "" {
			msg += " on " + a.Service
		}
		if a.Error != "" {
			msg += ": " + a.Error
		}
		return msg + " (error)"
	}
	var parts []string
	for _, r := range slices.Sorted(maps.Keys(a.Weights)) {
		parts = append(parts, r+" "+strconv.Itoa(a.Weights[r])+"%")
	}
	return "actuator " + a.Actuator + " applied " + a.Service + ": " + strings.Join(parts, ", ") + " (ok)"
}
