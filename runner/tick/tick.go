// Package tick is what the live loop hands its stages: one tick's
// Result, and the Stage that takes it, as a notify.Stage is one step of
// Alertmanager's pipeline. Each stage owns its state, its metrics and the
// lock over them, and learns of the tick only from the Result; no stage
// reads another's state, and no stage's package imports another's
// (runner.TestStagesKeepToThemselves). What a later stage needs of an
// earlier one travels in the Result.
package tick

import (
	"context"
	"time"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/promapi"
	"github.com/hermes-failover/hermes/rules/config"
)

// Stage is one step of a tick after evaluator.Step.
type Stage interface {
	Tick(ctx context.Context, t *Result)
}

// Result is what one tick computed, handed to every stage in order.
type Result struct {
	// Time is the tick's aligned time.
	Time time.Time
	// Config, Policy and Actuators are the configuration the tick ran
	// with; a reload during the tick takes effect at the next one.
	Config    *config.Config
	Policy    *evaluator.Policy
	Actuators []actuators.Actuator
	// Query is the tick's query side, for a stage that collects more
	// (the candidate policy's own signals).
	Query promapi.RouteQueryFunc
	// Snapshot is what the queries answered; Data reports whether at
	// least one of them answered (a value or no sample, not an error).
	Snapshot evaluator.Snapshot
	Data     bool
	// NoErrorSamples: no sample of Snapshot in a signal's own column is
	// evaluator.StatusError (the collector counted none while building
	// it), so a stage looking for the failed queries need not read every
	// route's samples. False when not known.
	NoErrorSamples bool
	// UnknownSplits are the services whose split Hermes did not know when
	// the tick began (evaluator.Input.UnknownSplits): their split in Next
	// is the core's placeholder unless an override gives it.
	UnknownSplits map[string]bool
	// Prev is the state before the tick, Next the one Step returned with
	// Events.
	Prev, Next evaluator.State
	Events     []evaluator.Event
	// IncidentStarts are the alerting stage's kept startsAt after the
	// tick before (alerting.Sender.IncidentStarts), for the restart
	// memory, which runs first.
	IncidentStarts []IncidentStart

	// Actuations are what the actuation stage saw the backends do this
	// tick (a changed split, the first failure), for the loop's memory.
	Actuations []evaluator.Actuation
}

// IncidentStart is the startsAt an alert was first sent with in an
// incident that is not over: what the alerting stage keeps of its
// incidents (alerting.Sender.IncidentStarts), and the persist stage saves
// in the local state file across a restart. It travels between the two
// in the Result.
type IncidentStart struct {
	// Key is the alert's key (evaluator.Alert.Key), Route its route.
	Key   string `json:"key"`
	Route string `json:"route"`
	// Incident is the route's incident (evaluator.Move.Incident).
	Incident time.Time `json:"incident"`
	// StartsAt is what Alertmanager and the on-call person saw.
	StartsAt time.Time `json:"starts_at"`
}
