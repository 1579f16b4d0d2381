package runner

import (
	"fmt"
	"maps"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
)

// actuatorFailingTicks is how many ticks an actuator may fail before the A
// alert HermesActuatorFailing fires: one failed tick is retried by the next.
const actuatorFailingTicks = 3

const actuatorAlertName = "HermesActuatorFailing"

// updateActuatorAlerts turns actuators that keep failing into A alerts, kept
// (like the core's alerts) for 15 minutes after they resolve so the resolve
// is re-sent. Caller holds r.mu.
func (r *Runner) updateActuatorAlerts(interval time.Duration, now time.Time) {
	if r.actAlerts == nil {
		r.actAlerts = map[string]*evaluator.AlertState{}
	}
	for name, st := range r.lastActs {
		key := actuatorAlertName + "//" + name
		a := r.actAlerts[key]
		failing := !st.OK && !st.FailingSince.IsZero() && now.Sub(st.FailingSince) >= actuatorFailingTicks*interval
		switch {
		case failing && (a == nil || a.Status != evaluator.AlertFiring):
			r.actAlerts[key] = &evaluator.AlertState{Rule: actuatorAlertName, Tier: "A", Status: evaluator.AlertFiring,
				ActiveAt: st.FailingSince, FiredAt: now, LastTrue: now,
				Labels: map[string]string{"alertname": actuatorAlertName, "severity": "critical", "tier": "A", "actuator": name},
				Annotations: map[string]string{
					"summary":     fmt.Sprintf("Actuator %s keeps failing: traffic does not move as Hermes decides.", name),
					"description": st.Error,
					"runbook_url": "https://github.com/hermes-failover/hermes/blob/main/docs/runbooks.md#hermesactuatorfailing",
				}}
		case failing:
			a.LastTrue = now
			a.Annotations["description"] = st.Error
		case a != nil && a.Status == evaluator.AlertFiring:
			a.Status = evaluator.AlertInactive
			a.ResolvedAt = now
		case a != nil && now.Sub(a.ResolvedAt) >= 15*time.Minute:
			delete(r.actAlerts, key)
		}
	}
}

// alertsToSend merges the core's alerts with the runner's own.
func (r *Runner) alertsToSend(core map[string]*evaluator.AlertState) map[string]*evaluator.AlertState {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := maps.Clone(core)
	if out == nil {
		out = map[string]*evaluator.AlertState{}
	}
	for k, a := range r.actAlerts {
		c := *a
		c.Labels, c.Annotations = maps.Clone(a.Labels), maps.Clone(a.Annotations)
		out[k] = &c
	}
	return out
}
