package persist

import (
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// TestRestoreAlertsHonoursStaleness restores alerts from series read by the
// real PromQL engine: Hermes exported its levels every 15 s for ten minutes
// and stopped; one alert was active to the end, one resolved five minutes
// earlier (its series ended with a staleness marker), one was pending for a
// minute long before. Only the first may come back; the others must not be
// revived with their old start.
func TestRestoreAlertsHonoursStaleness(t *testing.T) {
	p := testenv.Policy(t, testPolicy)
	f, err := backtest.Parse([]byte(`
interval: 15s
input_series:
  - series: 'hermes_route_level{job="hermes",route="free"}'
    values: '3x40'
  - series: 'hermes_alert_active_since_timestamp_seconds{job="hermes",alertname="HermesRouteScoreCritical",service="chat",route="free",level="failover"}'
    values: '60x40'
  - series: 'hermes_alert_active_since_timestamp_seconds{job="hermes",alertname="HermesRouteScoreDegraded",service="chat",route="free",level="failover"}'
    values: '45x20 stale'
  - series: 'hermes_alert_active_since_timestamp_seconds{job="hermes",alertname="HermesAllRoutesBad",service="chat",level="failover"}'
    values: '_x4 90x4 stale'
`))
	if err != nil {
		t.Fatal(err)
	}
	b, err := backtest.Open(f)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	restart := b.End().Add(30 * time.Second)
	got, err := RestoreAlerts(t.Context(), b.Query, p, restart, RestoreOptions{Selector: `job="hermes"`})
	if err != nil {
		t.Fatal(err)
	}
	if keys := slices.Sorted(maps.Keys(got)); strings.Join(keys, " ") != "HermesRouteScoreCritical/chat/free" {
		t.Fatalf("restored %v, want only the alert active at the last export", keys)
	}
	if a := got["HermesRouteScoreCritical/chat/free"]; !a.ActiveAt.Equal(time.Unix(60, 0)) {
		t.Errorf("active since %s, want its exported start", a.ActiveAt)
	}
}
