package main

import (
	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/actuators/dns"
	"github.com/hermes-failover/hermes/actuators/file"
	"github.com/hermes-failover/hermes/actuators/nginx"
	"github.com/hermes-failover/hermes/actuators/unleash"
	"github.com/hermes-failover/hermes/actuators/webhook"
)

// actuatorKinds wires every actuator backend the binary ships, explicitly.
func actuatorKinds() *actuators.Registry {
	kinds := &actuators.Registry{}
	for _, register := range []func(*actuators.Registry){file.Register, nginx.Register, dns.Register, unleash.Register, webhook.Register} {
		register(kinds)
	}
	return kinds
}
