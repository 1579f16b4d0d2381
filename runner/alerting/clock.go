package alerting

import "time"

// ShiftClock moves the times the sender remembers (when each alert was
// last queued) by jump, a jump of the wall clock that the runner moves
// the state's times by: after a backward jump the resend delay would
// otherwise hold every firing alert back until the clock caught up,
// and Alertmanager would resolve them once their endsAt passed.
func (s *Sender) ShiftClock(jump time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, t := range s.lastSent {
		s.lastSent[k] = t.Add(jump)
	}
}
