package alerting

import (
	"context"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/runner/tick"
)

// AlertError is the last run-time failure of one alert rule's expression
// (evaluator.EventAlertError: a division by zero, a result that is not a
// bool); the alert counted as not holding. They are counted in
// hermes_alert_eval_errors_total and logged; this is what the status page
// and API show of them.
type AlertError struct {
	Alert string
	// Service and Route are the target of the last failure.
	Service, Route string
	Error          string
	// At is the tick of the last failure, Since the first of this process.
	At, Since time.Time
	// Count is how many evaluations failed in this process.
	Count int
}

// Stage is the alerting stage of the live loop: it sends the state's
// alerts to every Alertmanager (Sender, which owns its queues) and keeps
// the last run-time failure of each alert expression for the status
// page. It reads the tick's Result and its own state only; its methods
// are safe for concurrent use.
type Stage struct {
	sender *Sender

	mu     sync.Mutex
	errors map[string]AlertError
}

// NewStage sends through sender.
func NewStage(sender *Sender) *Stage {
	return &Stage{sender: sender, errors: map[string]AlertError{}}
}

// Tick keeps the tick's alert errors and queues its alerts; an alert
// that fires again before its route is back at normal keeps the startsAt
// of its incident (Sender.NotifyIncidents).
func (s *Stage) Tick(ctx context.Context, t *tick.Result) {
	s.noteErrors(t.Events)
	s.sender.NotifyIncidents(ctx, t.Next.Alerts, IncidentsOf(t.Next.Routes), t.Time)
}

// IncidentStarts are the startsAt the stage keeps for alerts of incidents
// not over, for the local state file.
func (s *Stage) IncidentStarts() []tick.IncidentStart {
	return s.sender.IncidentStarts()
}

// Restored takes the startsAt saved before a restart, reconciled with the
// restored state: only those of routes still in the same incident.
func (s *Stage) Restored(saved []tick.IncidentStart, st evaluator.State) {
	s.sender.RestoreIncidents(saved, IncidentsOf(st.Routes))
}

// Run delivers the queued alerts until ctx is done or Stop is called.
func (s *Stage) Run(ctx context.Context) { s.sender.Run(ctx) }

// Stop makes Run deliver what is queued and return.
func (s *Stage) Stop() { s.sender.Stop() }

// ShiftClock moves when each alert was last sent by jump, a jump of the
// wall clock (Sender.ShiftClock).
func (s *Stage) ShiftClock(jump time.Duration) { s.sender.ShiftClock(jump) }

// ApplyConfig takes a reloaded alerting configuration.
func (s *Stage) ApplyConfig(cfg config.AlertingConfig, interval time.Duration) error {
	return s.sender.ApplyConfig(cfg, interval)
}

// noteErrors keeps the alert errors among the events of one tick, the
// last one by alert.
func (s *Stage) noteErrors(events []evaluator.Event) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, e := range events {
		if e.Type != evaluator.EventAlertError {
			continue
		}
		ae := s.errors[e.Name]
		if ae.Count == 0 {
			ae.Since = e.Time
		}
		ae.Alert, ae.Service, ae.Route, ae.At = e.Name, e.Service, e.Route, e.Time
		ae.Error = strings.Join(e.Reasons, "; ")
		ae.Count++
		s.errors[e.Name] = ae
	}
}

// LastErrors returns the kept alert errors of the rules cfg still has, by
// alert name.
func (s *Stage) LastErrors(cfg *config.Config) []AlertError {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []AlertError
	for _, name := range slices.Sorted(maps.Keys(s.errors)) {
		if cfg != nil && !slices.ContainsFunc(cfg.Alerts, func(a rules.AlertRuleConfig) bool { return a.Name == name }) {
			continue // removed by a reload
		}
		out = append(out, s.errors[name])
	}
	return out
}
