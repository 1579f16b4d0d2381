package persist

import (
	"maps"
	"slices"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
)

// SavedAlerts are the active alerts as this process last saved them on
// disk (in the local state file, Local), at Tick. They bridge what
// MetricAlertActiveSince cannot: an alert that became active, or fired,
// after Prometheus's last scrape of Hermes. Restored from Prometheus alone,
// a restart within that scrape would start the alert again, with a second
// "firing" record and a new startsAt.
type SavedAlerts struct {
	// Tick is the tick whose alerts these are.
	Tick   time.Time    `json:"tick"`
	Alerts []SavedAlert `json:"alerts"`
}

// SavedAlert is one active alert: the non-empty values of
// evaluator.ForStateLabels (what MetricAlertActiveSince carries), when it
// became active, and when it fired.
type SavedAlert struct {
	Labels   map[string]string `json:"labels"`
	ActiveAt time.Time         `json:"active_at"`
	FiredAt  time.Time         `json:"fired_at,omitzero"`
}

// SaveAlerts returns the active alerts of alerts at tick, ordered by key.
func SaveAlerts(alerts map[string]*evaluator.Alert, tick time.Time) SavedAlerts {
	out := SavedAlerts{Tick: tick.UTC(), Alerts: []SavedAlert{}}
	for _, k := range slices.Sorted(maps.Keys(alerts)) {
		a := alerts[k]
		if !a.Active() {
			continue
		}
		labels := map[string]string{}
		for i, v := range a.ForStateValues() {
			if v != "" {
				labels[evaluator.ForStateLabels[i]] = v
			}
		}
		out.Alerts = append(out.Alerts, SavedAlert{Labels: labels, ActiveAt: a.ActiveAt.UTC(), FiredAt: a.FiredAt.UTC()})
	}
	return out
}

// SameActive reports whether a and b hold the same active alerts, begun
// and fired at the same times: whether SaveAlerts of one would differ from
// the other's.
func SameActive(a, b map[string]*evaluator.Alert) bool {
	active := func(m map[string]*evaluator.Alert) map[string]*evaluator.Alert {
		out := map[string]*evaluator.Alert{}
		for k, al := range m {
			if al.Active() {
				out[k] = al
			}
		}
		return out
	}
	return maps.EqualFunc(active(a), active(b), func(x, y *evaluator.Alert) bool {
		return x.ActiveAt.Equal(y.ActiveAt) && x.FiredAt.Equal(y.FiredAt)
	})
}

// restore rebuilds the saved alerts through the policy
// (evaluator.Policy.RestoreAlert, as RestoreAlerts does), at now. Alerts
// saved longer than the tolerance ago are not restored, like series older
// than it; a saved FiredAt is kept, so Alertmanager gets the same startsAt.
func (s SavedAlerts) restore(p *evaluator.Policy, now time.Time, opt RestoreOptions) map[string]*evaluator.Alert {
	out := map[string]*evaluator.Alert{}
	if s.Tick.IsZero() || now.Sub(s.Tick) > opt.tolerance() {
		return out
	}
	for _, sa := range s.Alerts {
		a, ok := p.RestoreAlert(sa.Labels, sa.ActiveAt, now)
		if !ok {
			continue
		}
		if a.State == evaluator.StateFiring && !sa.FiredAt.IsZero() && !sa.FiredAt.After(now) {
			a.FiredAt = sa.FiredAt
		}
		out[a.Key()] = a
	}
	return out
}

// mergeAlerts adds to prom, the alerts restored from Prometheus, the saved
// ones it lacks or holds with an earlier activation: the later activation
// wins, as between replicas in RestoreAlerts.
func mergeAlerts(prom, saved map[string]*evaluator.Alert) map[string]*evaluator.Alert {
	out := maps.Clone(prom)
	if out == nil {
		out = map[string]*evaluator.Alert{}
	}
	for k, a := range saved {
		if old := out[k]; old == nil || a.ActiveAt.After(old.ActiveAt) {
			out[k] = a
		}
	}
	return out
}
