package evaluator

import (
	"testing"
	"time"
)

func TestFiredAt(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tick := 15 * time.Second
	for _, c := range []struct {
		forDur time.Duration
		now    time.Time
		want   time.Time
	}{
		{0, t0.Add(time.Hour), t0},
		{50 * time.Second, t0.Add(time.Hour), t0.Add(time.Minute)},
		{time.Minute, t0.Add(time.Hour), t0.Add(time.Minute)},
		{50 * time.Second, t0.Add(55 * time.Second), t0.Add(55 * time.Second)},
	} {
		if got := firedAt(t0, c.forDur, tick, c.now); !got.Equal(c.want) {
			t.Errorf("firedAt(for %s, now %s) = %s, want %s", c.forDur, c.now, got, c.want)
		}
	}
}

func TestRestoreActuatorAlert(t *testing.T) {
	p := policyWithActuator(t)
	now := time.Unix(1e9, 0).UTC()
	labels := map[string]string{"alertname": "HermesActuatorFailing", "actuator": "split"}
	a, ok := p.RestoreAlert(labels, now.Add(-time.Minute), now)
	if !ok || a.State != StateFiring || a.Actuator != "split" || a.Labels["actuator"] != "split" || a.Labels["severity"] != "critical" {
		t.Fatalf("restored %+v (ok %v), want a firing actuator alert", a, ok)
	}
	if a.Key() != AlertKey("HermesActuatorFailing", "", "", "split") {
		t.Errorf("key %q", a.Key())
	}
	for _, bad := range []map[string]string{
		{"alertname": "HermesActuatorFailing", "actuator": "gone"},
		{"alertname": "HermesActuatorFailing", "actuator": "split", "service": "chat"},
		{"alertname": "HermesRouteFailedOver", "actuator": "split"},
	} {
		if _, ok := p.RestoreAlert(bad, now.Add(-time.Minute), now); ok {
			t.Errorf("restored %v", bad)
		}
	}
}
