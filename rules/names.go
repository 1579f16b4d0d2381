package rules

import (
	"regexp"

	"github.com/hermes-failover/hermes/traffic"
)

// LevelNames are the configured levels, mildest first, as levels must list them.
var LevelNames = []string{traffic.Warm.String(), traffic.Shed.String(), traffic.Failover.String()}

// FloorLevels are the levels a scoring floor may force.
var FloorLevels = []string{traffic.Warm.String(), traffic.Shed.String(), traffic.Failover.String(), traffic.Manual.String()}

var routeNameRE = regexp.MustCompile(`^[a-zA-Z0-9_.:-]+$`)

// ValidRouteName says whether name may name a route: letters, digits and
// _ . : -. Names that differ only in case are twins, refused where routes
// are listed together.
func ValidRouteName(name string) bool { return routeNameRE.MatchString(name) }

// RouteNamePattern is the pattern ValidRouteName checks, for messages.
func RouteNamePattern() string { return routeNameRE.String() }
