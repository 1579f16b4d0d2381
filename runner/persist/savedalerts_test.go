package persist

import (
	"context"
	"encoding/json"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/traffic"
)

// TestSavedAlertsFillWhatPrometheusLacks: Load with a Prometheus that has no
// alert series (not scraped since the alerts began) brings the saved alerts
// back, through JSON as the overrides file keeps them, with their active
// and fired times; saved longer than the tolerance ago, they do not come
// back; of one alert in both, the later activation wins.
func TestSavedAlertsFillWhatPrometheusLacks(t *testing.T) {
	p := testenv.Policy(t, testPolicy)
	tick := 15 * time.Second
	var st evaluator.State
	var now time.Time
	for i := range 6 {
		now = t0.Add(time.Duration(i) * tick)
		st, _ = evaluator.Step(p, st, snapshot(p, now, map[string]float64{"free": 0.5, "paid": 0}), now)
	}
	b, err := json.Marshal(SaveAlerts(st.Alerts, now))
	if err != nil {
		t.Fatal(err)
	}
	var saved SavedAlerts
	if err := json.Unmarshal(b, &saved); err != nil {
		t.Fatal(err)
	}
	nothing := func(context.Context, string, time.Time) (model.Vector, error) { return model.Vector{}, nil }
	load := func(at time.Time, tolerance time.Duration) map[string]*evaluator.Alert {
		got := Load(context.Background(), p, nothing, func(context.Context) (map[string]traffic.Split, error) { return nil, nil },
			Local{Alerts: saved}, at, RestoreOptions{Tolerance: tolerance})
		return got.State.Alerts
	}
	restart := now.Add(5 * time.Second)
	got := load(restart, time.Hour)
	if keys, want := slices.Sorted(maps.Keys(got)), slices.Sorted(maps.Keys(st.Alerts)); !slices.Equal(keys, want) {
		t.Fatalf("restored %v, want %v", keys, want)
	}
	for k, a := range st.Alerts {
		r := got[k]
		if r.State != a.State || !r.ActiveAt.Equal(a.ActiveAt) || !r.FiredAt.Equal(a.FiredAt) || r.Labels["level"] != a.Labels["level"] {
			t.Errorf("%s restored as %s active %s fired %s level %s; was %s active %s fired %s level %s", k,
				r.State, r.ActiveAt, r.FiredAt, r.Labels["level"], a.State, a.ActiveAt, a.FiredAt, a.Labels["level"])
		}
	}
	if got := load(now.Add(2*time.Hour), time.Hour); len(got) != 0 {
		t.Errorf("alerts saved 2h before a restart with a 1h tolerance came back: %v", slices.Sorted(maps.Keys(got)))
	}

	// Prometheus knows the critical alert from an earlier activation.
	key := evaluator.AlertKey("HermesRouteScoreCritical", "chat", "free", "")
	older := &evaluator.Alert{Rule: "HermesRouteScoreCritical", ActiveAt: t0.Add(-time.Hour)}
	merged := mergeAlerts(map[string]*evaluator.Alert{key: older}, saved.restore(p, restart, RestoreOptions{}))
	if !merged[key].ActiveAt.Equal(st.Alerts[key].ActiveAt) {
		t.Errorf("merged active_at %s, want the saved, later %s", merged[key].ActiveAt, st.Alerts[key].ActiveAt)
	}
}
