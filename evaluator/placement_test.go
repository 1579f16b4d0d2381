package evaluator

import (
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/traffic"
)

// TestPlacement drives one route through decideRoute with the shipped
// policy and checks that Placement names the dwell, hysteresis, floor and
// failover clocks that hold it, at the times decideRoute will act.
func TestPlacement(t *testing.T) {
	p := defaultPolicy(t)
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	shed, fo := p.Level(traffic.Shed), p.Level(traffic.Failover)
	// Low (the far end of the evidence) equals Value: no counted calls.
	score := func(v float64) Score { return Score{Value: v, Low: v} }
	var rs RouteState
	step := func(at time.Duration, sc Score) {
		t.Helper()
		// A failed-over route gets no traffic until its failback starts.
		idle := rs.Level == traffic.Failover && rs.Stage == 0
		rs, _ = decideRoute(p, rs, sc, idle, t0.Add(at))
	}
	want := func(at time.Duration, level traffic.Level, lines ...string) {
		t.Helper()
		if rs.Level != level {
			t.Fatalf("at %s: level %s, want %s", at, rs.Level, level)
		}
		all := Placement(p, rs, t0.Add(at))
		got := strings.Join(all, "\n")
		// Waiting is the tail of Placement: what the level waits for.
		ws := Waiting(p, rs, t0.Add(at))
		checkWaitKinds(t, p, ws)
		if w := WaitTexts(ws); !slices.Equal(all[len(all)-len(w):], w) {
			t.Errorf("at %s: Waiting %q is not the end of Placement %q", at, w, all)
		}
		for _, l := range lines {
			if !strings.Contains(got, l) {
				t.Errorf("at %s: placement lacks %q:\n%s", at, l, got)
			}
		}
	}
	stamp := func(d time.Duration) string { return t0.Add(d).Format(time.RFC3339) }

	// Below shed's threshold: shed's dwell runs (the most severe one).
	step(0, score(shed.Below-5))
	want(0, traffic.Normal, "score 70.0; moves down below 85 (warm, dwell 1m0s), 75 (shed, dwell 1m0s), 60 (failover, dwell 2m0s)",
		"dwell: below 75 (or floored) for shed since "+stamp(0)+"; moves to shed at "+stamp(shed.Dwell))
	step(shed.Dwell, score(shed.Below-5))
	want(shed.Dwell, traffic.Shed, "hysteresis: returns to warm once the score is ≥ 82 for 5m0s (and 5m0s after entering shed)")
	// Above the threshold but under recover_above: still hysteresis.
	step(shed.Dwell+time.Minute, score(shed.RecoverAbove-1))
	want(shed.Dwell+time.Minute, traffic.Shed, "hysteresis: returns to warm")
	// Recovering: the later of recover_for and cooldown decides.
	rec := shed.Dwell + 2*time.Minute
	step(rec, score(shed.RecoverAbove))
	want(rec, traffic.Shed, "recovering: score ≥ 82; returns to warm at "+stamp(rec+shed.RecoverFor))
	step(rec+shed.RecoverFor, score(shed.RecoverAbove))
	want(rec+shed.RecoverFor, traffic.Warm, "hysteresis: returns to normal once the score is ≥ 90")

	// A floor holds the level whatever the score.
	floored := Score{Value: 100, Low: 100, Floor: traffic.Warm, LowFloor: traffic.Warm, Contributions: []Contribution{
		{Signal: "quota_remaining", Value: 0.05, Status: StatusOK, CapsAt: -1, Floor: traffic.Warm},
		{Signal: "error_body_ratio", Value: 0.5, Status: StatusOK, CapsAt: 40},
	}}
	at := rec + shed.RecoverFor + time.Minute
	step(at, floored)
	want(at, traffic.Warm, "floor: quota_remaining 0.05 forces at least warm", "cap: error_body_ratio 0.5 caps the score at 40",
		"hold: a floor keeps the route at warm")
	// Missing data holds the level.
	step(at+time.Minute, Score{Value: 95, Low: 95, Missing: []string{"p99_ratio"}})
	want(at+time.Minute, traffic.Warm, "hold: no data for [p99_ratio]")

	// Failover: the manual_after clock, then the failback's stages.
	at += 2 * time.Minute
	step(at, score(fo.Below-10))
	step(at+fo.Dwell, score(fo.Below-10))
	want(at+fo.Dwell, traffic.Failover, "failing since "+stamp(at+fo.Dwell)+": goes to manual at "+stamp(at+fo.Dwell+p.Config.Failback.ManualAfter),
		"hysteresis: the staged failback starts once the score is ≥ 80 for 10m0s")
	// Still serving users though failed over (degraded mode): never
	// manual, and Placement says so instead of a manual_after time.
	serving := Score{Value: 100, Low: fo.RecoverAbove - 30, Contributions: []Contribution{
		{Signal: "soft_fail_ratio", Value: 0.02, Status: StatusOK, CapsAt: -1, Volume: 60, Counted: true},
	}}
	srs := rs
	srs.Score = serving
	if got := strings.Join(WaitTexts(Waiting(p, srs, t0.Add(at+fo.Dwell))), "\n"); !strings.Contains(got, "serving while failed over") || strings.Contains(got, "goes to manual") {
		t.Errorf("a failed-over route that serves: %q", got)
	}
	// One that served until its failover: its calls' 1m windows are
	// empty, but the 15m mean reply size still has a value. It serves
	// nobody now, and its manual_after clock runs.
	leftovers := Score{Value: 50, Low: 50, Contributions: []Contribution{
		{Signal: "soft_fail_ratio", Value: math.NaN(), Status: StatusMissing, CapsAt: -1, Idle: true, Counted: true},
		{Signal: "response_size_ratio", Value: 0.8, Status: StatusOK, CapsAt: -1},
	}}
	lrs := rs
	lrs.Score = leftovers
	if got := strings.Join(WaitTexts(Waiting(p, lrs, t0.Add(at+fo.Dwell))), "\n"); strings.Contains(got, "serving while failed over") || !strings.Contains(got, "goes to manual") {
		t.Errorf("a failed-over route with a 15m window's leftovers: %q", got)
	}

	// Not shown failing, not yet shown healthy: it waits for evidence, and
	// the manual_after clock calls no one, even once it has run out.
	at += fo.Dwell + time.Minute
	thin := Score{Value: 100, Low: fo.RecoverAbove - 30}
	step(at, thin)
	want(at, traffic.Failover, "waiting for evidence: not shown failing, not yet shown healthy (the score is at least 50.0)")
	step(at+p.Config.Failback.ManualAfter, thin)
	want(at+p.Config.Failback.ManualAfter, traffic.Failover, "waiting for evidence")
	at += p.Config.Failback.ManualAfter + time.Minute
	step(at, score(fo.RecoverAbove))
	want(at, traffic.Failover, "recovering: the staged failback starts at "+stamp(at+fo.RecoverFor))
	step(at+fo.RecoverFor, score(fo.RecoverAbove))
	want(at+fo.RecoverFor, traffic.Failover, "failback stage 1 of 4 since "+stamp(at+fo.RecoverFor)+": the next stage at "+
		stamp(at+fo.RecoverFor+p.Config.Failback.Observe))
}
