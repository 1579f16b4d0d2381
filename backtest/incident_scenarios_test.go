package backtest_test

import (
	"context"
	"maps"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/traffic"
)

// The incident corpus (testdata/scenarios/gen/incidents.go): failure shapes
// of the incident write-ups, each with what a user expects of the shipped
// policy. Each test first checks that the series show what the scenario
// claims (through the same PromQL engine), then what Hermes did. Onsets
// are at 1h unless said otherwise.

// seriesAt evaluates q on the scenario's own series at offset d and returns
// its value per route.
func seriesAt(t *testing.T, name, q string, d time.Duration) map[string]float64 {
	t.Helper()
	bt, err := backtest.OpenFile(filepath.Join(scenarioDir, name+".yaml"))
	if err != nil {
		t.Fatal(err)
	}
	defer bt.Close()
	vec, err := bt.Query(context.Background(), q, at(d))
	if err != nil {
		t.Fatalf("%s at %s: %v", q, d, err)
	}
	out := map[string]float64{}
	for _, s := range vec {
		out[string(s.Metric["route"])] = float64(s.Value)
	}
	return out
}

// shareOf is the share of the free route's calls over the last minute that
// match sel (a label matcher list), as the gateway counted them.
func shareOf(t *testing.T, name, sel string, d time.Duration) float64 {
	t.Helper()
	q := `sum by (route) (increase(llm_gateway_requests_total{` + sel + `}[1m])) / sum by (route) (increase(llm_gateway_requests_total[1m]))`
	return seriesAt(t, name, q, d)["free"]
}

// assertOnlyFreeMoves fails for every level change of a route other than free.
func assertOnlyFreeMoves(t *testing.T, tl *backtest.Timeline) {
	t.Helper()
	for _, e := range events(tl, evaluator.EventLevel, "") {
		if e.Route != "free" {
			t.Errorf("%s moved %s→%s at %s: %v", e.Route, e.From, e.To, e.Time.Format(time.TimeOnly), e.Reasons)
		}
	}
}

// assertCalmBefore fails for a level change or an A/B alert before ts.
func assertCalmBefore(t *testing.T, tl *backtest.Timeline, ts time.Time) {
	t.Helper()
	for _, e := range events(tl, evaluator.EventLevel, "") {
		if e.Time.Before(ts) {
			t.Errorf("level change before %s: %s %s→%s at %s: %v", ts.Format(time.TimeOnly), e.Route, e.From, e.To, e.Time.Format(time.TimeOnly), e.Reasons)
		}
	}
	for _, e := range append(firing(tl, "A"), firing(tl, "B")...) {
		if e.Time.Before(ts) {
			t.Errorf("alert before %s: %s on %s at %s", ts.Format(time.TimeOnly), e.Name, e.Route, e.Time.Format(time.TimeOnly))
		}
	}
}

// assertNoTrafficBetween fails when route gets traffic of chat at a tick in [from, to).
func assertNoTrafficBetween(t *testing.T, tl *backtest.Timeline, route string, from, to time.Time) {
	t.Helper()
	for ts := from; ts.Before(to); ts = ts.Add(tl.Step) {
		if w := weightsAt(tl, "chat", ts)[route]; w != 0 {
			t.Errorf("%s has %d%% at %s; want none from %s to %s", route, w, ts.Format(time.TimeOnly), from.Format(time.TimeOnly), to.Format(time.TimeOnly))
			return
		}
	}
}

// assertMovedWithin fails unless route left normal for at least level
// within d of from.
func assertMovedWithin(t *testing.T, tl *backtest.Timeline, route string, from time.Time, d time.Duration, level traffic.Level) evaluator.Event {
	t.Helper()
	mv, ok := firstMove(tl, route, from)
	if !ok {
		t.Fatalf("%s never moved after %s", route, from.Format(time.TimeOnly))
	}
	if mv.Time.Sub(from) > d || levelOf(mv.To) < level {
		t.Errorf("first move of %s %s→%s %s after %s; want at least %s within %s", route, mv.From, mv.To, mv.Time.Sub(from), from.Format(time.TimeOnly), level, d)
	}
	return mv
}

func namesSignal(e evaluator.Event, signal string) bool {
	return slices.ContainsFunc(e.Reasons, func(r string) bool { return strings.HasPrefix(r, signal+" ") })
}

func TestScenarioTruncation(t *testing.T) {
	const name = "truncation"
	if s := shareOf(t, name, `reason=~"truncated|empty"`, 90*time.Minute); s < 0.17 {
		t.Fatalf("scenario: %.3f of replies cut short or empty at 1h30, want about 20 %%", s)
	}
	size := `sum by (route) (increase(llm_gateway_response_size_bytes_sum[15m])) / sum by (route) (increase(llm_gateway_response_size_bytes_count[15m]))`
	if before, during := seriesAt(t, name, size, 55*time.Minute)["free"], seriesAt(t, name, size, 100*time.Minute)["free"]; !(during < 0.9*before) {
		t.Fatalf("scenario: mean reply size %.0f B during the truncation, %.0f B before; want a drop", during, before)
	}
	tl := runScenario(t, name, backtest.Options{})
	golden(t, name, tl)
	assertCalmBefore(t, tl, at(onset))
	// Cut replies reach 20 % at 1h10: past the ~18 % at which content
	// failures alone fail a route over (docs/design.md); a dwell later it
	// gets nothing until the failure ends.
	mv := assertMovedWithin(t, tl, "free", at(onset), 10*time.Minute, traffic.Warm)
	if !namesSignal(mv, "soft_fail_ratio") {
		t.Errorf("first move does not name soft_fail_ratio: %v", mv.Reasons)
	}
	assertNoTrafficBetween(t, tl, "free", at(onset+15*time.Minute), at(2*time.Hour))
	if len(firing(tl, "A")) == 0 {
		t.Error("no page for a route that truncates a fifth of its replies")
	}
	assertOnlyFreeMoves(t, tl)
	assertNoFlapping(t, tl)
}

func TestScenarioFallbackPhrases(t *testing.T) {
	const name = "fallback_phrases"
	if s := shareOf(t, name, `verdict="soft_fail",reason="fallback_phrase"`, 70*time.Minute); s < 0.2 {
		t.Fatalf("scenario: %.3f of replies are fallback phrases at 1h10, want about 25 %%", s)
	}
	tl := runScenario(t, name, backtest.Options{})
	golden(t, name, tl)
	assertCalmBefore(t, tl, at(onset))
	mv := assertMovedWithin(t, tl, "free", at(onset), time.Minute, traffic.Warm)
	if !namesSignal(mv, "soft_fail_ratio") {
		t.Errorf("first move does not name soft_fail_ratio: %v", mv.Reasons)
	}
	// A quarter of canned answers on 1 200 calls a minute is overwhelming:
	// failed over within the failover dwell of the onset.
	if fo := failedOverAt(tl, "free", at(onset)); fo.IsZero() || fo.Sub(at(onset)) > 2*time.Minute {
		t.Errorf("failover at %s, want within 2m of the onset", fo.Format(time.TimeOnly))
	}
	// Canned answers are not error templates: the page must not say so.
	for _, e := range firing(tl, "") {
		if e.Name == "HermesErrorTemplatesInOK" {
			t.Errorf("%s fired at %s for fallback phrases", e.Name, e.Time.Format(time.TimeOnly))
		}
	}
	assertOnlyFreeMoves(t, tl)
	assertNoFlapping(t, tl)
}

func TestScenarioStatus422Surge(t *testing.T) {
	const name = "status_422_surge"
	if s := shareOf(t, name, `code="422",verdict="hard_fail"`, 50*time.Minute); s <= 0 || s > 0.01 {
		t.Fatalf("scenario: 422 share before the change %.4f, want the 0.2 %% background", s)
	}
	if s := shareOf(t, name, `code="422",verdict="hard_fail"`, 70*time.Minute); s < 0.25 {
		t.Fatalf("scenario: 422 share after the change %.3f, want about 30 %%", s)
	}
	tl := runScenario(t, name, backtest.Options{})
	golden(t, name, tl)
	// The 0.2 % background of 422s is not a failure.
	assertCalmBefore(t, tl, at(onset))
	// 422s are hard failures: past the 20 % cap they act at once.
	if fo := failedOverAt(tl, "free", at(onset)); fo.IsZero() || fo.Sub(at(onset)) > time.Minute {
		t.Errorf("failover at %s, want within 1m of the onset", fo.Format(time.TimeOnly))
	}
	if !fired(tl, "B", "HermesStatus422High", "free") {
		t.Error("no HermesStatus422High for free: the caller's template needs fixing")
	}
	assertOnlyFreeMoves(t, tl)
	assertNoFlapping(t, tl)
}

func TestScenarioLatencyLongTail(t *testing.T) {
	const name = "latency_long_tail"
	q := func(phi string, d time.Duration) float64 {
		return seriesAt(t, name, `histogram_quantile(`+phi+`, sum by (route, le) (rate(llm_gateway_request_duration_seconds_bucket[5m])))`, d)["free"]
	}
	p50, p50Tail, p99, p99Tail := q("0.5", 85*time.Minute), q("0.5", 110*time.Minute), q("0.99", 85*time.Minute), q("0.99", 110*time.Minute)
	if math.Abs(p50Tail/p50-1) > 0.1 || p99Tail < 2.5*p99 {
		t.Fatalf("scenario: P50 %.2fs → %.2fs, P99 %.2fs → %.2fs; want P50 flat and P99 ≥ 2.5×", p50, p50Tail, p99, p99Tail)
	}
	tl := runScenario(t, name, backtest.Options{})
	golden(t, name, tl)
	tail := 90 * time.Minute
	assertCalmBefore(t, tl, at(tail))
	// The tail is read, not the median: the route is acted on within 5m...
	assertMovedWithin(t, tl, "free", at(tail), 5*time.Minute, traffic.Warm)
	// ...but latency alone never fails it over or pages.
	for _, e := range events(tl, evaluator.EventLevel, "free") {
		if levelOf(e.To) > traffic.Shed {
			t.Errorf("latency alone moved free to %s at %s", e.To, e.Time.Format(time.TimeOnly))
		}
	}
	if a := firing(tl, "A"); len(a) != 0 {
		t.Errorf("latency alone paged: %s at %s", a[0].Name, a[0].Time.Format(time.TimeOnly))
	}
	if w := weightsAt(tl, "chat", tl.End)["free"]; w != 100 {
		t.Errorf("free ends with %d%% after the tail is gone, want 100", w)
	}
	assertOnlyFreeMoves(t, tl)
	assertNoFlapping(t, tl)
}

// TestScenarioRetrySurge: retries per call 1 % → 25 %, latency ×1.7 and
// 422s ×5 at once, no reply failing otherwise (the incident write-ups' "the
// upstream is changing its rules or overloaded"): the route is degraded
// and a person gets a ticket (tier B) within 15 minutes, from the retries.
func TestScenarioRetrySurge(t *testing.T) {
	const name = "retry_surge"
	tl := runScenario(t, name, backtest.Options{})
	golden(t, name, tl)
	assertCalmBefore(t, tl, at(onset))
	assertMovedWithin(t, tl, "free", at(onset), 10*time.Minute, traffic.Warm)
	var b *evaluator.Event
	for _, e := range events(tl, evaluator.EventAlert, "free") {
		if e.State == "firing" && (e.Tier == "A" || e.Tier == "B") && !e.Time.Before(at(onset)) {
			b = &e
			break
		}
	}
	switch {
	case b == nil:
		t.Fatal("no A or B alert for the retry surge")
	case b.Time.Sub(at(onset)) > 15*time.Minute:
		t.Errorf("first A or B alert %s at %s, more than 15 min after the onset", b.Name, b.Time.Format(time.TimeOnly))
	}
	if !fired(tl, "B", "HermesRetryStorm", "free") {
		t.Error("HermesRetryStorm never fired")
	}
	assertOnlyFreeMoves(t, tl)
	assertNoFlapping(t, tl)
}

// fired reports whether alert name of tier fired for route in tl.
func fired(tl *backtest.Timeline, tier, name, route string) bool {
	for _, e := range firing(tl, tier) {
		if e.Name == name && e.Route == route {
			return true
		}
	}
	return false
}

func TestScenarioRetryStorm(t *testing.T) {
	const name = "retry_storm"
	calls := func(d time.Duration) float64 {
		return seriesAt(t, name, `sum by (route) (increase(llm_gateway_requests_total[1m]))`, d)["free"]
	}
	if base, surge, storm := calls(25*time.Minute), calls(40*time.Minute), calls(90*time.Minute); surge < 2.5*base || storm < 2.5*base {
		t.Fatalf("scenario: %.0f calls a minute before, %.0f in the surge, %.0f in the storm; want ×3", base, surge, storm)
	}
	tl := runScenario(t, name, backtest.Options{})
	golden(t, name, tl)
	// Three times the calls with healthy replies is not evidence of anything.
	assertCalmBefore(t, tl, at(onset))
	// The storm is acted on for its failure ratio: at the first move the
	// timeouts are past the hard-failure threshold (1 %) and named.
	mv := assertMovedWithin(t, tl, "free", at(onset), 10*time.Minute, traffic.Warm)
	if s := shareOf(t, name, `code="timeout"`, mv.Time.Sub(at(0))); s < 0.01 {
		t.Errorf("first move at %s while timeouts were %.4f of calls: below the 1 %% threshold", mv.Time.Format(time.TimeOnly), s)
	}
	if !namesSignal(mv, "hard_fail_ratio") {
		t.Errorf("first move does not name hard_fail_ratio: %v", mv.Reasons)
	}
	// The page names its cause, the heaviest first.
	for _, e := range events(tl, evaluator.EventAlert, "free") {
		if e.Name == "HermesRouteFailedOver" && e.State == "firing" {
			if d := e.Annotations["description"]; !strings.HasPrefix(d, "Moved by hard_fail_ratio") {
				t.Errorf("the failover page's description %q does not name hard_fail_ratio first", d)
			}
			break
		}
	}
	// Timeouts pass the 20 % hard-failure cap at 1h10: no traffic after,
	// and retries are turned off with the failover, ending the storm.
	assertNoTrafficBetween(t, tl, "free", at(onset+10*time.Minute+tl.Step), at(100*time.Minute))
	fo := failedOverAt(tl, "free", at(onset))
	for _, e := range events(tl, evaluator.EventTraffic, "") {
		if e.Time.Equal(fo) && (e.RetriesEnabled == nil || *e.RetriesEnabled) {
			t.Errorf("retries still on at the failover (%s)", fo.Format(time.TimeOnly))
		}
	}
	assertOnlyFreeMoves(t, tl)
	assertNoFlapping(t, tl)
}

func TestScenarioFlapping(t *testing.T) {
	const name = "flapping"
	bad, good := shareOf(t, name, `verdict="soft_fail"`, 63*time.Minute), shareOf(t, name, `verdict="soft_fail"`, 67*time.Minute+30*time.Second)
	if bad < 0.3 || good > 0.05 {
		t.Fatalf("scenario: soft-fail %.3f in a bad phase, %.3f in a good one", bad, good)
	}
	tl := runScenario(t, name, backtest.Options{})
	golden(t, name, tl)
	flapEnd := 3 * time.Hour
	// Hermes follows the trend, not each swing: at most 4 level changes in
	// any hour (normal → warm → shed → failover → manual)...
	lv := events(tl, evaluator.EventLevel, "free")
	for i := range lv {
		n := 0
		for _, e := range lv[i:] {
			if e.Time.Sub(lv[i].Time) < time.Hour {
				n++
			}
		}
		if n > 4 {
			t.Errorf("%d level changes in the hour from %s", n, lv[i].Time.Format(time.TimeOnly))
		}
	}
	// ...no full traffic back to free while it still swings...
	if mv, ok := firstMove(tl, "free", at(onset)); ok {
		for ts := mv.Time; ts.Before(at(flapEnd)); ts = ts.Add(tl.Step) {
			if w := weightsAt(tl, "chat", ts)["free"]; w == 100 {
				t.Errorf("free back to 100%% at %s while it still swings", ts.Format(time.TimeOnly))
				break
			}
		}
	} else {
		t.Fatal("free never moved")
	}
	// ...and no page twice for the same thing: each A alert of free fires
	// at most once while the upstream swings.
	seen := map[string]int{}
	for _, e := range firing(tl, "A") {
		if e.Route == "free" && e.Time.Before(at(flapEnd)) {
			if seen[e.Name]++; seen[e.Name] == 2 {
				t.Errorf("%s fired again at %s while the upstream swings", e.Name, e.Time.Format(time.TimeOnly))
			}
		}
	}
	if n := len(completedFailbacks(tl, "free")); n > 1 {
		t.Errorf("%d completed failbacks, want at most 1", n)
	}
	assertOnlyFreeMoves(t, tl)
	assertNoFlapping(t, tl)
}

// planTick is one tick's scores and chat split, as the core left them.
type planTick struct {
	at       time.Time
	scores   map[string]float64
	weights  map[string]int
	degraded bool
}

func TestScenarioAllRoutesBad(t *testing.T) {
	const name = "all_routes_bad"
	var ticks []planTick
	tl := runScenario(t, name, backtest.Options{OnTick: func(ts time.Time, _ evaluator.Snapshot, s evaluator.State) {
		tk := planTick{at: ts, scores: map[string]float64{}, weights: maps.Clone(s.Services["chat"].Weights), degraded: s.Services["chat"].Degraded}
		for r, rs := range s.Routes {
			tk.scores[r] = rs.Score.Value
		}
		ticks = append(ticks, tk)
	}})
	golden(t, name, tl)
	end := 90 * time.Minute
	var paged bool
	for _, e := range firing(tl, "A") {
		paged = paged || (e.Name == "HermesAllRoutesBad" && e.Time.Sub(at(onset)) <= 5*time.Minute)
	}
	if !paged {
		t.Error("no HermesAllRoutesBad within 5m of every route failing")
	}
	// Degraded mode serves everything on one route, the least bad up to
	// failover's recovery gap (20 points in the shipped policy), and does
	// not move it back and forth: at most one move between routes that are
	// all failed (the first pick can be revised once a route's score
	// settles).
	const gap = 20.0
	var degraded, moves int
	last := ""
	for _, tk := range ticks {
		total, serving := 0, ""
		for r, p := range tk.weights {
			total += p
			if p == 100 {
				serving = r
			}
		}
		if total != 100 {
			t.Fatalf("split %v at %s does not sum to 100", tk.weights, tk.at.Format(time.TimeOnly))
		}
		if !tk.degraded {
			continue
		}
		degraded++
		if serving == "" {
			t.Errorf("degraded split %v at %s: want one route serving", tk.weights, tk.at.Format(time.TimeOnly))
			continue
		}
		for r, sc := range tk.scores {
			if sc >= tk.scores[serving]+gap {
				t.Errorf("degraded at %s: %s serves with score %.1f, %s has %.1f", tk.at.Format(time.TimeOnly), serving, tk.scores[serving], r, sc)
			}
		}
		if last != "" && serving != last {
			moves++
		}
		last = serving
		if tk.at.After(at(end + 30*time.Minute)) {
			t.Errorf("still degraded at %s, 30m after the provider recovered", tk.at.Format(time.TimeOnly))
		}
	}
	if degraded == 0 {
		t.Fatal("the service was never in degraded mode")
	}
	if moves > 1 {
		t.Errorf("degraded mode moved all traffic %d times between failed routes, want at most 1", moves)
	}
}

// TestScenarioContentRise checks the same content failure rising slowly
// (2 → 40 % over 3h) and quickly (within 2m): Hermes leaves normal before
// the ratio reaches 15 % (I1's alert line) and fails over before it reaches
// 30 % (I1's action line), whatever the speed, and never on noise.
func TestScenarioContentRise(t *testing.T) {
	for _, c := range []struct {
		name string
		rise time.Duration // from 2 % to 40 %
	}{{"content_rise_slow", 3 * time.Hour}, {"content_rise_fast", 2 * time.Minute}} {
		t.Run(c.name, func(t *testing.T) {
			// The share is 2 % + 38 % × (t − onset) / rise.
			reach := func(p float64) time.Time {
				return at(onset + time.Duration((p-0.02)/0.38*float64(c.rise)))
			}
			if s := shareOf(t, c.name, `verdict="soft_fail"`, onset+c.rise); s < 0.35 {
				t.Fatalf("scenario: soft-fail %.3f at the end of the rise, want about 40 %%", s)
			}
			tl := runScenario(t, c.name, backtest.Options{})
			golden(t, c.name, tl)
			// Below 5 % the share is within the noise.
			assertCalmBefore(t, tl, reach(0.05))
			mv, ok := firstMove(tl, "free", at(onset))
			if !ok {
				t.Fatal("free never moved")
			}
			// The 1m window lags the truth by up to a minute, plus a tick.
			lag := time.Minute + tl.Step
			if mv.Time.After(reach(0.15).Add(lag)) {
				t.Errorf("left normal at %s, want before the share reaches 15 %% (%s) plus %s", mv.Time.Format(time.TimeOnly), reach(0.15).Format(time.TimeOnly), lag)
			}
			if fo := failedOverAt(tl, "free", at(onset)); fo.IsZero() || fo.After(reach(0.30).Add(lag)) {
				t.Errorf("failed over at %s, want before the share reaches 30 %% (%s) plus %s", fo.Format(time.TimeOnly), reach(0.30).Format(time.TimeOnly), lag)
			}
			assertOnlyFreeMoves(t, tl)
			assertNoFlapping(t, tl)
		})
	}
}
