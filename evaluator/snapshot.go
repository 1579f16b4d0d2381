package evaluator

import "time"

// Status says whether a signal answered for a route.
type Status uint8

// Signal statuses.
const (
	StatusOK      Status = iota // a finite value
	StatusMissing               // no sample for the route (or NaN/±Inf)
	StatusError                 // the query failed or its result was ambiguous
)

func (s Status) String() string {
	switch s {
	case StatusOK:
		return "ok"
	case StatusMissing:
		return "missing"
	case StatusError:
		return "error"
	}
	return "unknown"
}

// Sample is one signal's value for one route at one tick.
type Sample struct {
	Value  float64
	Status Status
	// Reason explains a missing or erroring sample.
	Reason string
	// Volume is the count behind Value (calls for a signal with a volume,
	// samples for one with samples), meaningful when Counted.
	Volume float64
	// Counted: the source measured Volume. A signal that declares a volume
	// but arrives uncounted is taken at its value, as one without.
	Counted bool
}

// ActuatorHealth is how an actuator's applies have gone, as the live loop
// saw them after the previous tick; the actuator-scope alert rules read it.
type ActuatorHealth struct {
	OK bool
	// FailingSince is the tick of the first failure since the last success;
	// zero while the actuator works.
	FailingSince time.Time
	// Error is the last failure's message.
	Error string
}

// Snapshot holds every signal of every route at one tick,
// Values[route][signal], and the health of every actuator by name.
// A source fills a Sample for every configured route and signal.
type Snapshot struct {
	Time      time.Time
	Values    map[string]map[string]Sample
	Actuators map[string]ActuatorHealth
}

// Get returns the sample of signal for route, Missing if absent.
func (s Snapshot) Get(route, signal string) Sample { return s.Row(route).Get(signal) }

// Row is one route's samples by signal.
type Row map[string]Sample

// Row returns route's samples, to read many signals of one route with one
// lookup of the route.
func (s Snapshot) Row(route string) Row { return s.Values[route] }

// Get returns the sample of signal, Missing if absent.
func (r Row) Get(signal string) Sample {
	if v, ok := r[signal]; ok {
		return v
	}
	return Sample{Status: StatusMissing, Reason: "no sample"}
}

// Set stores a sample, allocating maps as needed.
func (s *Snapshot) Set(route, signal string, v Sample) {
	if s.Values == nil {
		s.Values = map[string]map[string]Sample{}
	}
	m := s.Values[route]
	if m == nil {
		m = map[string]Sample{}
		s.Values[route] = m
	}
	m[signal] = v
}

// Input is what one tick of the core reads besides its own state: the
// snapshot of signals and actuator health, and the operator commands queued
// since the previous tick, applied in order at the start of the tick.
type Input struct {
	Snapshot Snapshot
	Commands []Command
}
