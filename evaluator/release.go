package evaluator

import (
	"fmt"
	"time"
)

// Release hands a route in manual back to automation: it stays failed over
// and its next failback may start once its score allows, whatever the
// failback budget says (a person decided). It is an error to release a route
// that is not in manual.
func Release(p *Policy, prev State, route string, now time.Time, reason string) (State, []Event, error) {
	s := prev.Clone()
	rs, ok := s.Routes[route]
	if !ok {
		return prev, nil, fmt.Errorf("release: unknown route %q", route)
	}
	if rs.Level != Manual {
		return prev, nil, fmt.Errorf("release: route %q is %s, not manual", route, rs.Level)
	}
	*rs = moveTo(p, *rs, Failover, now, reason)
	rs.Released = true
	var evs []Event
	for _, svc := range p.Config.Services {
		if !contains(svc.Routes, route) {
			continue
		}
		evs = append(evs, Event{Time: now, Type: EventLevel, Service: svc.Name, Route: route,
			From: Manual.String(), To: Failover.String(), Score: ptr(rs.Score.Value),
			Reasons: []string{"released by a person: " + reason}})
	}
	return s, evs, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }
