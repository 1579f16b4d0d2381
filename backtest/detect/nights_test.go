package detect

import (
	"context"
	"testing"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/rules/config"
)

// TestNightsOfTheShippedPolicy is issue #21's figures as properties, on 40
// random low-traffic nights of each kind (synth.Night, 6 h each, primary
// at 0.2–0.4 req/s, backups at 0.01–0.1): a 15 % fallback-phrase failure
// acted on within 15 min on at least 95 % of failing nights; on at most
// 2 % of healthy nights any level change, traffic move or A/B alert; on at
// most 2 % of failing nights a backup changing level. `make bench-detect`
// measures the same on more nights (NIGHTS, 100 of each by default).
func TestNightsOfTheShippedPolicy(t *testing.T) {
	cfg, err := config.Default()
	if err != nil {
		t.Fatal(err)
	}
	pol, err := evaluator.NewPolicy(cfg.Rules())
	if err != nil {
		t.Fatal(err)
	}
	const n = 40
	reports, err := Nights(context.Background(), pol, 1, n)
	if err != nil {
		t.Fatal(err)
	}
	r := reports[0]
	if r.Method != MethodHermes || r.Failing != n || r.Healthy != n {
		t.Fatalf("first report %q over %d failing and %d healthy nights, want %q over %d and %d", r.Method, r.Failing, r.Healthy, MethodHermes, n, n)
	}
	t.Logf("caught %d of %d within %s (median first move %s); backups moved on %d; healthy nights disturbed %d; false moves %d, false alerts %d over %.1f route-days",
		r.Caught, r.Failing, ActWithin, after(r.MedianFirstMove()), r.BystanderNights, r.Disturbed, r.FalseMoves, r.FalseAlerts, r.RouteDays)
	if float64(r.Caught) < 0.95*n {
		t.Errorf("caught %d of %d failing nights within %s, want at least 95 %%; first moves %v", r.Caught, n, ActWithin, r.FirstMoves)
	}
	if float64(r.Disturbed) > 0.02*n {
		t.Errorf("%d of %d healthy nights had a level change, move or A/B alert, want at most 2 %%", r.Disturbed, n)
	}
	if float64(r.BystanderNights) > 0.02*n {
		t.Errorf("a backup changed level on %d of %d failing nights, want at most 2 %%", r.BystanderNights, n)
	}
}
