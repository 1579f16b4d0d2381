package synth

import (
	"math"
	"strings"
	"testing"
	"time"
)

// seriesOf returns the drawn series whose name contains every part.
func seriesOf(t *testing.T, all []series, parts ...string) []float64 {
	t.Helper()
	for _, s := range all {
		ok := true
		for _, p := range parts {
			ok = ok && strings.Contains(s.name, p)
		}
		if ok {
			return s.values
		}
	}
	t.Fatalf("no series with %q", parts)
	return nil
}

// TestHealthyWeekHasTheFleetNoise checks each documented feature of the
// fleet noise in a drawn week.
func TestHealthyWeekHasTheFleetNoise(t *testing.T) {
	w := HealthyWeek(1)
	if w.Length() != WeekLength {
		t.Fatalf("length %s", w.Length())
	}
	all := generate(w.sc, w.seed)
	at := func(d time.Duration) int { return int(d / step) }
	day := 24 * time.Hour
	calls := func(route string, from, to time.Duration) float64 {
		// Sum the increments of the +Inf bucket, restarts and gaps skipped.
		v := seriesOf(t, all, `llm_gateway_request_duration_seconds_bucket{route="`+route+`"`, `le="+Inf"`)
		n, prev := 0.0, math.NaN()
		for i := at(from); i <= at(to); i++ {
			if math.IsNaN(v[i]) {
				continue
			}
			if !math.IsNaN(prev) && v[i] >= prev {
				n += v[i] - prev
			}
			prev = v[i]
		}
		return n
	}

	// Diurnal, weekends lower.
	if peak, trough := calls("free", 2*day+15*time.Hour, 2*day+17*time.Hour), calls("free", 2*day+3*time.Hour, 2*day+5*time.Hour); trough > 0.2*peak || peak == 0 {
		t.Errorf("Wednesday: %v calls 15:00–17:00, %v 03:00–05:00: want a trough of about a tenth", peak, trough)
	}
	if wed, sat := calls("free", 2*day, 3*day), calls("free", 5*day, 6*day); sat > 0.7*wed {
		t.Errorf("Saturday %v calls, Wednesday %v: want the weekend at about 60 %%", sat, wed)
	}

	// A backup idle at night: present and flat for hours.
	prem := seriesOf(t, all, `llm_gateway_requests_total{route="paid-premium",code="200",verdict="ok"}`)
	var flat, present int
	for i := at(day + 23*time.Hour); i < at(2*day+6*time.Hour); i++ {
		if !math.IsNaN(prem[i]) {
			present++
			if j := i - 1; !math.IsNaN(prem[j]) && prem[i] == prem[j] {
				flat++
			}
		}
	}
	if present < at(6*time.Hour) || flat < present*9/10 {
		t.Errorf("paid-premium 23:00–06:00: %d samples present, %d flat: want present and flat", present, flat)
	}

	// Drift: the soft-fail share per hour stays within about 0.5–3.5 %.
	soft := seriesOf(t, all, `route="free",code="200",verdict="soft_fail",reason="invalid_json"`)
	ok := seriesOf(t, all, `route="free",code="200",verdict="ok"`)
	r := func(d time.Duration) float64 { return w.sc.routes["free"].soft(d) }
	lo, hi := 1.0, 0.0
	for d := time.Duration(0); d < WeekLength; d += time.Hour {
		lo, hi = math.Min(lo, r(d)), math.Max(hi, r(d))
	}
	if lo < 0.005 || hi > 0.035 || hi-lo < 0.01 {
		t.Errorf("soft-fail share drifts within [%.4f, %.4f]: want inside [0.005, 0.035] and moving", lo, hi)
	}

	// Gaps of 1–3 scrapes, all series of the route at once; a restart a day.
	runs := map[int]int{}
	for i := 0; i < len(ok); {
		if !math.IsNaN(ok[i]) {
			i++
			continue
		}
		j := i
		for j < len(ok) && math.IsNaN(ok[j]) {
			if !math.IsNaN(soft[j]) {
				t.Fatalf("scrape %d: ok absent, soft_fail present", j)
			}
			j++
		}
		runs[j-i]++
		i = j
	}
	if len(runs) == 0 || runs[4]+runs[5]+runs[6] > 0 {
		t.Errorf("gap lengths %v: want gaps of 1 to 3 scrapes (two gaps may touch)", runs)
	}
	resets := 0
	prev := math.NaN()
	for _, v := range ok {
		if math.IsNaN(v) {
			continue
		}
		if v < prev {
			resets++
		}
		prev = v
	}
	if resets != 7 {
		t.Errorf("free's ok counter reset %d times in a week, want 7 (a restart a day)", resets)
	}

	// The free quota: 30 % left at midnight, then 100 %.
	q := seriesOf(t, all, `llm_gateway_quota_remaining_ratio{route="free"}`)
	for d := 1; d < 7; d++ {
		before, after := q[at(time.Duration(d)*day)-1], q[at(time.Duration(d)*day)]
		if math.IsNaN(before) || math.IsNaN(after) {
			continue
		}
		if math.Abs(before-0.3) > 0.01 || after != 1 {
			t.Errorf("day %d: quota %.3f before midnight, %.3f at midnight: want ~0.30 then 1", d, before, after)
		}
	}

	// Probes: readiness fails about 0.5 %, end-to-end about 2 %.
	last := func(v []float64) float64 {
		for i := len(v) - 1; i >= 0; i-- {
			if !math.IsNaN(v[i]) {
				return v[i]
			}
		}
		return 0
	}
	for _, c := range []struct {
		layer, verdict string
		want           float64
	}{{"readiness", "hard_fail", 0.005}, {"e2e", "soft_fail", 0.02}} {
		okN := last(seriesOf(t, all, `llm_probe_results_total{route="free",layer="`+c.layer+`"`, `verdict="ok"`))
		failN := last(seriesOf(t, all, `llm_probe_results_total{route="free",layer="`+c.layer+`"`, `verdict="`+c.verdict+`"`))
		if got := failN / (okN + failN); math.Abs(got-c.want) > c.want/3 {
			t.Errorf("%s probes failed %.4f of %v results, want about %.3f", c.layer, got, okN+failN, c.want)
		}
	}
}

// TestFleetNightsAreDrawnPerSeed: a fleet night is the same for the same
// seed and rate, its failing variant has the same noise and a truth from
// an onset between 1h and 2h to the end, and a bad kind is an error.
func TestFleetNightsAreDrawnPerSeed(t *testing.T) {
	a, err := FleetNight(0.3, "", 3)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := FleetNight(0.3, "", 3)
	c, _ := FleetNight(0.3, "", 4)
	if string(a.File()) != string(b.File()) || string(a.File()) == string(c.File()) {
		t.Error("a fleet night is not determined by its rate and seed")
	}
	if _, ok := a.Onset(); ok {
		t.Error("a healthy night has an onset")
	}
	f, err := FleetNight(0.3, Fail503, 3)
	if err != nil {
		t.Fatal(err)
	}
	on, ok := f.Onset()
	if !ok || on < time.Hour || on >= 2*time.Hour || f.truth[0].to != NightLength || f.truth[0].route != "free" {
		t.Errorf("failing night truth %+v", f.truth)
	}
	if !strings.Contains(string(f.File()), `code="503",verdict="hard_fail"`) {
		t.Error("no 503 series on a 503 night")
	}
	if _, err := FleetNight(0.3, "teapot", 3); err == nil {
		t.Error("an unknown failure kind was accepted")
	}
}

// TestFleetNightShareIsTheSameNight: FleetNightShare at a kind's own
// FailureShare is FleetNight, byte for byte; another share changes the
// failing calls, not the night's draws (its onset); a share outside
// (0, 1] is refused.
func TestFleetNightShareIsTheSameNight(t *testing.T) {
	a, err := FleetNight(0.3, Fail503, 7)
	if err != nil {
		t.Fatal(err)
	}
	b, err := FleetNightShare(0.3, Fail503, 0.05, 7)
	if err != nil {
		t.Fatal(err)
	}
	if string(a.File()) != string(b.File()) {
		t.Error("FleetNightShare at FailureShare differs from FleetNight")
	}
	c, err := FleetNightShare(0.3, Fail503, 0.08, 7)
	if err != nil {
		t.Fatal(err)
	}
	ao, _ := a.Onset()
	co, _ := c.Onset()
	if ao != co || string(a.File()) == string(c.File()) {
		t.Errorf("8 %% night: onset %s (5 %%: %s), files equal %v; want the same onset and other calls", co, ao, string(a.File()) == string(c.File()))
	}
	for _, bad := range []float64{0, -0.1, 1.5} {
		if _, err := FleetNightShare(0.3, Fail503, bad, 7); err == nil {
			t.Errorf("share %v accepted", bad)
		}
	}
}
