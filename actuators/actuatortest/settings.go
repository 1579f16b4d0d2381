package actuatortest

import (
	"log/slog"

	"github.com/hermes-failover/hermes/actuators"
)

// Settings is what Registry.Build hands the factory of an actuator of this
// kind, with these options and services, and no name: Name is the kind and
// the logger discards. Tests that build a backend directly start from it
// (and set Name when they check it).
func Settings(kind string, opts map[string]any, services ...string) actuators.Settings {
	return actuators.Settings{
		Name:     kind,
		Type:     kind,
		Services: services,
		Options:  opts,
		Logger:   slog.New(slog.DiscardHandler),
	}
}
