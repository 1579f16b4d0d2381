// Package labelname spells, once, the Prometheus label names by which
// Hermes's packages meet: the route a signal's series are of (what
// promapi reads), and the route, service, signal and actuator of Hermes's
// own series and alerts (what telemetry and persist write and restore
// reads back, what the core labels alerts with, what backtests read).
// Like package traffic it is a leaf: it imports nothing, so the core may
// import it.
package labelname

// Label names.
const (
	// Route names a route: in every signal's result, in Hermes's own
	// series and on its alerts.
	Route = "route"
	// Service names a service of routes.
	Service = "service"
	// Signal names a signal of the policy.
	Signal = "signal"
	// Actuator names an actuator, a backend that carries the splits.
	Actuator = "actuator"
)
