package actuators

import (
	"errors"
	"fmt"

	"github.com/hermes-failover/hermes/rules"
)

// StampCarrier is implemented by backends that store each split's
// writer's stamp (traffic.Split.Writer) in what they serve and return it
// from Current: the file actuator in its JSON, nginx in the state line
// that nginx itself answers. Two replicas (hermes run --replica) hold a
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
func CheckStamps(cfgs []rules.ActuatorConfig, acts []Actuator) error {
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
