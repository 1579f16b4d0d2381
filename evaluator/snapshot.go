package evaluator

import (
	"iter"
	"time"

	"github.com/hermes-failover/hermes/traffic"
)

// SampleStatus says whether a signal answered for a route.
type SampleStatus uint8

// noCalls reports whether s is a counted signal without a value because
// its route had no calls in the window: its counters are there and did
// not move. Unlike a signal without data, that is known: the route had no
// user traffic.
func (s Sample) noCalls() bool { return s.Status == StatusMissing && s.Counted && s.Volume == 0 }

// Signal statuses.
const (
	StatusOK      SampleStatus = iota // a finite value
	StatusMissing                     // no sample for the route (or NaN/±Inf)
	StatusError                       // the query failed or its result was ambiguous
)

func (s SampleStatus) String() string {
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

// Sample is one signal's value for one route at one tick. Its fields are
// ordered so a Sample takes 40 bytes: a 10,000-route snapshot holds
// 140,000 of them, and a tick reads them all.
type Sample struct {
	Value float64
	// Volume is the count behind Value (calls for a signal with a volume,
	// samples for one with samples), meaningful when Counted.
	Volume float64
	// Reason explains a missing or erroring sample.
	Reason string
	Status SampleStatus
	// Counted: the source measured Volume. A signal that declares a volume
	// but arrives uncounted is taken at its value, as one without.
	Counted bool
}

// noSample is what a table cell no source filled reads.
var noSample = Sample{Status: StatusMissing, Reason: "no sample"}

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

// Snapshot holds every signal of every route at one tick, and the health
// of every actuator by name. The samples are a table: a row per route, a
// column per signal, a cell for each (one not set reads missing, "no
// sample"). A source that knows its routes and signals makes it with
// NewSnapshot, and a tick then reads each route's samples as one run of
// memory, in the order they were made in: at 10,000 routes a map per route
// cost a cache miss per signal. A Snapshot copied shares its table, as a
// map would; Clone copies it.
type Snapshot struct {
	Time      time.Time
	Actuators map[string]ActuatorHealth
	t         *table
}

// NewSnapshot returns a snapshot at t with a row for each of routes and a
// column for each of signals, every cell missing until Set. A table made
// with a policy's Routes() and its signals in order is read without any
// lookup by name.
func NewSnapshot(t time.Time, routes, signals []string) Snapshot {
	return Snapshot{Time: t, t: newTable(routes, signals)}
}

// Get returns the sample of signal for route, Missing if absent.
func (s Snapshot) Get(route, signal string) Sample { return s.Row(route).Get(signal) }

// Routes returns the routes the snapshot has a row for, in row order.
func (s Snapshot) Routes() []string {
	if s.t == nil {
		return nil
	}
	return s.t.routes
}

// Signals returns the signals the snapshot has a column for, in column
// order.
func (s Snapshot) Signals() []string {
	if s.t == nil {
		return nil
	}
	return s.t.signals
}

// Row is one route's samples by signal.
type Row struct {
	t     *table
	cells []cell // nil when the route has no row
}

// Row returns route's samples, to read many signals of one route with one
// lookup of the route.
func (s Snapshot) Row(route string) Row {
	if s.t == nil {
		return Row{}
	}
	i, ok := s.t.rowOf[route]
	if !ok {
		return Row{}
	}
	return Row{t: s.t, cells: s.t.row(i)}
}

// Get returns the sample of signal, Missing if absent.
func (r Row) Get(signal string) Sample {
	if r.cells != nil {
		if j, ok := r.t.colOf[signal]; ok {
			return r.t.sample(r.cells[j])
		}
	}
	return noSample
}

// Set stores a sample, adding a row or a column as needed. Adding a column
// lays the table out again: a source that knows its signals names them in
// NewSnapshot.
func (s *Snapshot) Set(route, signal string, v Sample) {
	s.own()
	s.t.set(route, signal, v)
}

// SetCell stores the sample of the route and signal at positions row and
// col of those NewSnapshot was given, for a source that fills the table in
// its own order without a lookup by name.
func (s *Snapshot) SetCell(row, col int, v Sample) {
	s.own()
	s.t.row(row)[col] = s.t.cellOf(v)
}

// own gives s a table to write when it has none.
func (s *Snapshot) own() {
	if s.t == nil {
		s.t = newTable(nil, nil)
	}
}

// Clone returns a copy of s whose samples may be Set without changing s's.
func (s Snapshot) Clone() Snapshot {
	if s.t != nil {
		s.t = s.t.clone()
	}
	return s
}

// All yields every cell of the table: each route, signal and sample, in
// row and column order.
func (s Snapshot) All() iter.Seq2[[2]string, Sample] {
	return func(yield func([2]string, Sample) bool) {
		if s.t == nil {
			return
		}
		for i, r := range s.t.routes {
			for j, c := range s.t.row(i) {
				if !yield([2]string{r, s.t.signals[j]}, s.t.sample(c)) {
					return
				}
			}
		}
	}
}

// Input is what one tick of the core reads besides its own state: the
// snapshot of signals and actuator health, and the operator commands queued
// since the previous tick, applied in order at the start of the tick.
type Input struct {
	Snapshot Snapshot
	Commands []Command
	// UnknownSplits are the services whose split no backend could say at
	// the restart and that the actuators have not been written since: the
	// core's split for them is a placeholder, so a pause of one freezes
	// nothing (Apply).
	UnknownSplits map[string]bool
	// Applied are, by service, the split its rate-limited backends
	// (max_shift_per_tick) took at their last successful apply, when they
	// all agree. A limited move steps from it rather than from the split
	// planned last tick (shift.go): a backend whose applies failed while
	// the plan went on is then never asked for more than the limit at
	// once when it recovers. Nil outside the live loop (backtests): the
	// plan steps from itself.
	Applied map[string]traffic.Split
}
