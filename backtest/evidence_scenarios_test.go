package backtest_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/promapi"
	"github.com/hermes-failover/hermes/traffic"
)

// The figures of the evidence model (docs/detection.md, "Evidence model"): how soon
// the shipped policy acts on strong evidence, and that it does not act on
// thin traffic or noise. Onsets are at 1h, on a scrape.

const onset = time.Hour

// firstMove is the first level change of route at or after from.
func firstMove(tl *backtest.Timeline, route string, from time.Time) (evaluator.Event, bool) {
	for _, e := range events(tl, evaluator.EventLevel, route) {
		if !e.Time.Before(from) {
			return e, true
		}
	}
	return evaluator.Event{}, false
}

// failedOverAt is the first tick at or after from at which route gets no
// traffic of chat; zero if never.
func failedOverAt(tl *backtest.Timeline, route string, from time.Time) time.Time {
	for ts := from; !ts.After(tl.End); ts = ts.Add(tl.Step) {
		if weightsAt(tl, "chat", ts)[route] == 0 {
			return ts
		}
	}
	return time.Time{}
}

func assertQuiet(t *testing.T, tl *backtest.Timeline) {
	t.Helper()
	for _, e := range events(tl, evaluator.EventLevel, "") {
		t.Errorf("level change %s %s→%s at %s: %v", e.Route, e.From, e.To, e.Time.Format(time.TimeOnly), e.Reasons)
	}
	for _, e := range append(firing(tl, "A"), firing(tl, "B")...) {
		t.Errorf("alert %s [%s] on %s at %s: %s", e.Name, e.Tier, e.Route, e.Time.Format(time.TimeOnly), e.Annotations["description"])
	}
}

func TestScenarioErrorTemplates(t *testing.T) {
	tl := runScenario(t, "error_templates", backtest.Options{})
	golden(t, "error_templates", tl)
	mv, ok := firstMove(tl, "free", at(onset))
	if !ok {
		t.Fatal("free never moved")
	}
	if d := mv.Time.Sub(at(onset)); d > 30*time.Second {
		t.Errorf("first traffic move %s after onset (%s→%s), want ≤ 30s", d, mv.From, mv.To)
	}
	fo := failedOverAt(tl, "free", at(onset))
	if fo.IsZero() || fo.Sub(at(onset)) > time.Minute {
		t.Errorf("full failover at %s, want ≤ 60s after onset", fo.Format(time.TimeOnly))
	}
	assertNoFlapping(t, tl)
}

func TestScenarioUnavailable503(t *testing.T) {
	tl := runScenario(t, "unavailable_503", backtest.Options{})
	golden(t, "unavailable_503", tl)
	// The first tick whose data hold a 503 is the onset's own: the counter
	// sample at 1h carries the first failed scrape interval.
	if fo := failedOverAt(tl, "free", at(onset-tl.Step)); !fo.Equal(at(onset)) {
		t.Errorf("failover at %s, want on the first tick whose data show the 503s (%s)", fo.Format(time.TimeOnly), at(onset).Format(time.TimeOnly))
	}
	assertNoFlapping(t, tl)
}

func TestScenarioHealthy24h(t *testing.T) {
	if testing.Short() {
		t.Skip("24 h backtest; run without -short")
	}
	tl := runScenario(t, "healthy_24h", backtest.Options{})
	golden(t, "healthy_24h", tl)
	assertQuiet(t, tl)
}

func TestScenarioLowTrafficNight(t *testing.T) {
	tl := runScenario(t, "low_traffic_night", backtest.Options{})
	golden(t, "low_traffic_night", tl)
	assertQuiet(t, tl)
}

func TestScenarioContent15(t *testing.T) {
	for _, c := range []struct {
		name   string
		within time.Duration
	}{{"content_15", time.Minute}, {"content_15_thin", 5 * time.Minute}} { // thin: 15m before its 5m and 15m windows
		t.Run(c.name, func(t *testing.T) {
			tl := runScenario(t, c.name, backtest.Options{})
			golden(t, c.name, tl)
			mv, ok := firstMove(tl, "free", at(onset))
			if !ok {
				t.Fatal("free never left normal")
			}
			if d := mv.Time.Sub(at(onset)); d > c.within || levelOf(mv.To) < traffic.Warm {
				t.Errorf("first move %s→%s %s after onset, want at least warm within %s", mv.From, mv.To, d, c.within)
			}
			for _, e := range events(tl, evaluator.EventLevel, "") {
				if e.Route != "free" {
					t.Errorf("%s moved %s→%s at %s", e.Route, e.From, e.To, e.Time.Format(time.TimeOnly))
				}
			}
		})
	}
}

// TestScenarioFailbackStage2rps: a first failback stage at 10 % of a
// 20 req/s service carries 2 req/s, whose minute never proves the route
// within its thresholds at 99.9 %; the stage's calls over 15m do, so it
// completes within twice failback.observe of its start, and the recovered
// route never goes to manual.
func TestScenarioFailbackStage2rps(t *testing.T) {
	tl := runScenario(t, "failback_stage_2rps", backtest.Options{})
	golden(t, "failback_stage_2rps", tl)
	observe := 15 * time.Minute // the shipped failback.observe
	var started, next time.Time
	for _, e := range events(tl, evaluator.EventFailback, "free") {
		switch {
		case e.Stage != nil && *e.Stage == 1 && started.IsZero():
			started = e.Time
		case e.Stage != nil && *e.Stage == 2 && !started.IsZero() && next.IsZero():
			next = e.Time
		}
	}
	if started.IsZero() {
		t.Fatal("free never started its failback")
	}
	if next.IsZero() || next.Sub(started) > 2*observe {
		t.Errorf("stage 1 from %s completed at %v, want within %s", started.Format(time.TimeOnly), next, 2*observe)
	}
	for _, e := range events(tl, evaluator.EventLevel, "free") {
		if e.To == traffic.Manual.String() {
			t.Errorf("free went to manual at %s: %v", e.Time.Format(time.TimeOnly), e.Reasons)
		}
	}
}

// TestScenarioIdleReadiness: no user calls reach any route, so only the
// probes judge them. Free's readiness probe fails from 1h: it fails over
// within 10 min. Before that, nothing moves and nothing pages (an idle
// route is not a blind one: no HermesSignalMissing), and the backups,
// idle and healthy throughout, never change level.
func TestScenarioIdleReadiness(t *testing.T) {
	tl := runScenario(t, "idle_readiness", backtest.Options{})
	golden(t, "idle_readiness", tl)
	if fo := failedOverAt(tl, "free", at(onset)); fo.IsZero() || fo.Sub(at(onset)) > 10*time.Minute {
		t.Errorf("free failed over at %v, want within 10m of %s", fo, at(onset).Format(time.TimeOnly))
	}
	for _, e := range append(firing(tl, "A"), firing(tl, "B")...) {
		if e.Time.Before(at(onset)) || e.Route != "free" || e.Name == "HermesSignalMissing" {
			t.Errorf("alert %s [%s] on %s at %s", e.Name, e.Tier, e.Route, e.Time.Format(time.TimeOnly))
		}
	}
	for _, e := range events(tl, evaluator.EventLevel, "") {
		if e.Route != "free" || e.Time.Before(at(onset)) {
			t.Errorf("level change %s %s→%s at %s: %v", e.Route, e.From, e.To, e.Time.Format(time.TimeOnly), e.Reasons)
		}
	}
}

// TestScenarioQueryErrorsEveryOtherTick replays the content failure with
// every query of every other tick failing: the failover comes no later
// than without the failures plus one tick.
func TestScenarioQueryErrorsEveryOtherTick(t *testing.T) {
	base := runScenario(t, "content_failure", backtest.Options{})
	want := failedOverAt(base, "free", at(onset))
	if want.IsZero() {
		t.Fatal("content_failure never fails over")
	}

	step := 15 * time.Second // the shipped evaluation interval
	tl := backtestVia(t, "content_failure", backtest.Options{}, func(q promapi.QueryFunc) promapi.QueryFunc {
		return func(ctx context.Context, query string, ts time.Time) (model.Vector, error) {
			if ts.Unix()/int64(step.Seconds())%2 == 1 {
				return nil, errors.New("query timed out in expression evaluation")
			}
			return q(ctx, query, ts)
		}
	})
	got := failedOverAt(tl, "free", at(onset))
	if got.IsZero() || got.After(want.Add(step)) {
		t.Errorf("with a failing query every other tick free failed over at %s, without at %s: want at most one tick later",
			got.Format(time.TimeOnly), want.Format(time.TimeOnly))
	}
}

// TestScenarioFailback3rps: a 3 req/s service whose free route returns
// error templates on 30 % of its calls for an hour. Its readiness probe
// passes throughout; its end-to-end probes fail as its users' replies do.
// While it is broken no failback stage starts; once it recovers, its
// failback (stages of 10 % = 0.3 req/s and up, here all at 0.3 req/s)
// completes within twice the stages' observe time, with no person.
func TestScenarioFailback3rps(t *testing.T) {
	tl := runScenario(t, "failback_3rps", backtest.Options{})
	golden(t, "failback_3rps", tl)
	heal := 85 * time.Minute
	stages, observe := 4, 15*time.Minute // the shipped failback.stages and observe
	if fo := failedOverAt(tl, "free", at(onset)); fo.IsZero() || fo.Sub(at(onset)) > 5*time.Minute {
		t.Fatalf("free failed over at %v, want within 5m of the onset", fo)
	}
	var done time.Time
	for _, e := range events(tl, evaluator.EventFailback, "free") {
		if e.Time.Before(at(heal)) && e.Stage != nil && *e.Stage > 0 {
			t.Errorf("failback stage %d started at %s while free was still 30 %% broken: %v", *e.Stage, e.Time.Format(time.TimeOnly), e.Reasons)
		}
	}
	for _, e := range events(tl, evaluator.EventLevel, "free") {
		switch e.To {
		case traffic.Manual.String():
			t.Errorf("free went to manual at %s: %v", e.Time.Format(time.TimeOnly), e.Reasons)
		case traffic.Normal.String():
			if done.IsZero() && !e.Time.Before(at(heal)) {
				done = e.Time
			}
		}
	}
	if limit := at(heal + 2*time.Duration(stages)*observe); done.IsZero() || done.After(limit) {
		t.Errorf("failback completed at %v, want by %s (2 × stages × observe after the recovery)", done, limit.Format(time.TimeOnly))
	}
}
