// Package series names the series of Hermes's own that one stage writes
// and another reads back: the actuators' series, which the actuation
// stage exports every tick and the persist stage reads back from
// Prometheus for the status page's actuation markers. Stages meet here,
// not in each other's packages. Like labelname it is a leaf: it imports
// nothing.
package series

// Series of the actuators.
const (
	// ActuatorTrafficRatio is the share (0–1) of a service's traffic an
	// actuator's backend holds for a route after its last successful
	// apply (as read back from the backend, else as applied).
	ActuatorTrafficRatio = "hermes_actuator_traffic_ratio"
	// ActuatorChanged is the Unix time an actuator's backend last took a
	// new split for a service (when the apply returned); absent until the
	// process saw a change (its first apply after start-up is not one:
	// what the backend held before it is not known).
	ActuatorChanged = "hermes_actuator_changed_timestamp_seconds"
	// ActuatorFailingSince is the Unix time an actuator's applies began
	// to fail, 0 while its last apply succeeded.
	ActuatorFailingSince = "hermes_actuator_failing_since_timestamp_seconds"
)
