package actuators

import (
	"errors"
	"fmt"

	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/traffic"
)

// StampCarrier is implemented by backends that store each split's
// writer's stamp (traffic.Split.Writer) in what they serve and return it
// from Current: the file actuator in its JSON, nginx in the state line
// that nginx itself answers, dns in the flags TXT record, unleash in the
// parameters of its strategy. Two replicas (hermes run --replica) hold a
// lease on a backend through that stamp, so only these can be shared.
type StampCarrier interface {
	// CarriesStamp reports whether Current returns the Writer that Apply
	// was given.
	CarriesStamp() bool
}

// CheckStamps reports every actuator of acts whose backend cannot carry
// the writer's stamp, for a replica started with --replica: such a
// backend would be written by both replicas, which then fight over it.
// acts are what Build returned from cfgs, in the same order; problems
// are placed like Build's.
func CheckStamps(cfgs []config.ActuatorConfig, acts []Actuator) error {
	var errs []error
	for i, a := range acts {
		if c, ok := Backend(a).(StampCarrier); ok && c.CarriesStamp() {
			continue
		}
		kind := "this"
		if i < len(cfgs) && cfgs[i].Type != "" {
			kind = "a " + cfgs[i].Type
		}
		errs = append(errs, problemAt(i, a.Name(), fmt.Errorf(
			"%s actuator cannot store the writer's stamp that --replica leases a backend by, so two replicas would both write it: keep it out of the replicas' configuration, or run one replica without --replica", kind)))
	}
	return errors.Join(errs...)
}

// Relayed reports whether given, the stamp a backend is asked to write,
// is an earlier write of the replica whose later stamp held the backend
// holds: the replica that defers writes back the holder's split and
// stamp as it read them, possibly a moment before the holder's write of
// this tick. A backend that carries the stamp then keeps held and the
// split it came with, so the relayed read cannot put the old split back.
// Another replica's stamp, or the same one's at a later or equal tick, is
// not relayed: it is written.
func Relayed(given, held traffic.Stamp) bool {
	return given.Replica != "" && held.Replica == given.Replica && held.Tick.After(given.Tick)
}
