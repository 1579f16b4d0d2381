package actuation

import (
	"maps"
	"time"
)

// Outcome is the last outcome of one actuator's apply.
type Outcome struct {
	Actuator string
	At       time.Time
	OK       bool
	Error    string
	// FailingSince is when the actuator started failing without a success.
	FailingSince time.Time
}

// keepWithheld keeps the services the tick wrote to no backend, for
// Withheld.
func (s *Stage) keepWithheld(withheld map[string]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.tickWithheld = withheld
}

// Withheld are copies of the services the last tick wrote to no backend,
// with why, and of those whose split is unknown.
func (s *Stage) Withheld() (map[string]string, map[string]bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.tickWithheld), maps.Clone(s.unknownSplit)
}
