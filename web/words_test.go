package web

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/runner"
	"github.com/hermes-failover/hermes/traffic"
	"github.com/hermes-failover/hermes/web/api"
)

// failing is snap with every signal of p an error of reason for every
// route, and the problems the runner would report for it.
func failing(p *evaluator.Policy, snap evaluator.Snapshot, reason, detail string) (evaluator.Snapshot, []runner.SignalProblem) {
	var probs []runner.SignalProblem
	for _, sig := range p.Config.Signals {
		for _, r := range p.Routes() {
			snap.Set(r, sig.Name, evaluator.Sample{Status: evaluator.StatusError, Reason: reason})
		}
		probs = append(probs, runner.SignalProblem{Signal: sig.Name, Reason: reason, Detail: detail, Routes: len(p.Routes()), Route: p.Routes()[0]})
	}
	return snap, probs
}

func routeOf(t *testing.T, st api.Status, name string) api.Route {
	t.Helper()
	for _, svc := range st.Services {
		for _, rt := range svc.Routes {
			if rt.Name == name {
				return rt
			}
		}
	}
	t.Fatalf("no route %q in %+v", name, st)
	return api.Route{}
}

func hasLine(lines []string, part string) bool {
	return slices.ContainsFunc(lines, func(l string) bool { return strings.Contains(l, part) })
}

// TestStatusSaysPrometheusUnreachable: with every query refused, the
// status names Prometheus unreachable and why, a score never judged is
// "not judged", one judged before is carried, and each missing signal says
// its cause rather than "missing".
func TestStatusSaysPrometheusUnreachable(t *testing.T) {
	p := testenv.DefaultPolicy(t)
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	snap, probs := failing(p, testenv.Healthy(p, t0), "connection", "connection refused")
	s, _ := evaluator.Step(p, evaluator.State{}, evaluator.Input{Snapshot: snap}, t0)
	view := runner.View{Ticked: true, LastTick: t0, Config: &config.Config{Policy: *p.Config}, Policy: p, State: s, SignalProblems: probs}
	st := StatusOf(view)
	if !slices.Equal(st.Problems, []string{"Prometheus unreachable: connection refused"}) {
		t.Errorf("problems %q, want Prometheus unreachable: connection refused", st.Problems)
	}
	if len(st.QueryErrors) != len(p.Config.Signals) || st.QueryErrors[0].Detail != "connection refused" {
		t.Errorf("query errors %+v", st.QueryErrors)
	}
	free := routeOf(t, st, "free")
	if free.ScoreState != api.ScoreNotJudged {
		t.Errorf("score state %q, want not judged", free.ScoreState)
	}
	if !slices.Contains(free.State, "held: Prometheus unreachable: connection refused; not judged yet: the score is not a measurement") {
		t.Errorf("state %q lacks the hold and its cause", free.State)
	}
	if !hasLine(free.Reasons, "soft_fail_ratio, hard_fail_ratio, ") || !hasLine(free.Reasons, " missing: Prometheus unreachable: connection refused (level held)") {
		t.Errorf("reasons %q lack the cause of soft_fail_ratio's absence", free.Reasons)
	}

	// Judged once with data, then blind again: the score is carried.
	t1, t2 := t0.Add(15*time.Second), t0.Add(30*time.Second)
	s, _ = evaluator.Step(p, s, evaluator.Input{Snapshot: testenv.Healthy(p, t1)}, t1)
	snap, probs = failing(p, testenv.Healthy(p, t2), "connection", "connection refused")
	s, _ = evaluator.Step(p, s, evaluator.Input{Snapshot: snap}, t2)
	view.State, view.LastTick, view.SignalProblems = s, t2, probs
	free = routeOf(t, StatusOf(view), "free")
	if free.ScoreState != api.ScoreCarried || !hasLine(free.State, "the score 100.0 is carried from the last tick with full data") {
		t.Errorf("blind after data: score state %q, state %q; want carried", free.ScoreState, free.State)
	}
}

// TestStatusSaysQueryFailing: one signal's query failing is named with
// its reason and detail; the other signals answer.
func TestStatusSaysQueryFailing(t *testing.T) {
	got := problemWords([]runner.SignalProblem{
		{Signal: "p99_ratio", Reason: "bad_data", Detail: "parse error at char 3", Routes: 3},
		{Signal: "quota_remaining", Reason: "connection", Detail: "no such host", Routes: 3},
	}, 14)
	want := []string{
		"Prometheus unreachable for 1 of 14 signal queries (quota_remaining): no such host",
		"query failing: p99_ratio: bad_data (parse error at char 3)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("problemWords = %q, want %q", got, want)
	}
}

// TestStatusSaysFailedOver: a failed-over route says so with what its
// failback waits for (evaluator.Waiting), that probes alone judge it, and
// since the failover.
func TestStatusSaysFailedOver(t *testing.T) {
	p := testenv.DefaultPolicy(t)
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	snap := testenv.Healthy(p, t0)
	snap.Set("free", "hard_fail_ratio", evaluator.Sample{Value: 0.5})
	snap.Set("free", "probe_success", evaluator.Sample{Value: 0})
	s, _ := evaluator.Step(p, evaluator.State{}, evaluator.Input{Snapshot: snap}, t0)
	t1 := t0.Add(time.Minute)
	idle := testenv.Healthy(p, t1)
	for _, sig := range p.Config.Signals {
		if sig.RequiresTraffic {
			idle.Set("free", sig.Name, evaluator.Sample{Status: evaluator.StatusMissing, Reason: "no calls"})
		}
	}
	s, _ = evaluator.Step(p, s, evaluator.Input{Snapshot: idle}, t1)
	st := StatusOf(runner.View{Ticked: true, Ready: true, LastTick: t1, Config: &config.Config{Policy: *p.Config}, Policy: p, State: s})
	free := routeOf(t, st, "free")
	if free.Level != "failover" || !free.Since.Equal(t0) {
		t.Fatalf("free %s since %s, want failover since %s", free.Level, free.Since, t0)
	}
	if len(free.State) == 0 || !strings.HasPrefix(free.State[0], "failed over since 2026-12-01T03:00:00Z: ") ||
		!strings.Contains(free.State[0], "recovering: the staged failback starts at 2026-12-01T03:11:00Z if the score stays ≥ 80") ||
		!hasLine(free.State, "idle: judged by its probes alone") {
		t.Errorf("state %q, want failed over since the failover, when its failback starts, and idle", free.State)
	}
	if len(st.Problems) != 0 {
		t.Errorf("problems %q with every query answering", st.Problems)
	}
}

// TestRowSaysWhatItWaitsFor (issue 34): each route's row says in a line
// what it waits for, with the time left or the calls wanted; a failback at
// its last stage waits for the failback to complete, never for a "next
// stage" (it printed "the next stage" at stage 4 of 4).
func TestRowSaysWhatItWaitsFor(t *testing.T) {
	p := testenv.DefaultPolicy(t)
	t0 := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC)
	snap := testenv.Healthy(p, t0)
	snap.Set("free", "hard_fail_ratio", evaluator.Sample{Value: 0.5})
	snap.Set("free", "probe_success", evaluator.Sample{Value: 0})
	s, _ := evaluator.Step(p, evaluator.State{}, evaluator.Input{Snapshot: snap}, t0)
	t1 := t0.Add(time.Minute)
	s, _ = evaluator.Step(p, s, evaluator.Input{Snapshot: testenv.Healthy(p, t1)}, t1)
	st := StatusOf(runner.View{Ticked: true, Ready: true, LastTick: t1, Config: &config.Config{Policy: *p.Config}, Policy: p, State: s})
	fb, fo := p.Config.Failback, p.Level(traffic.Failover)
	want := fmt.Sprintf("10m0s more (03:11:00Z) with a score ≥ %g, for failback stage 1 (%d%%)", fo.RecoverAbove, fb.Stages[0])
	if got := routeOf(t, st, "free").WaitsFor; len(got) != 1 || got[0] != want {
		t.Errorf("failed-over free waits for %q, want %q", got, want)
	}
	if got := routeOf(t, st, "paid-standard").WaitsFor; len(got) != 0 {
		t.Errorf("a normal route waits for %q", got)
	}

	last := len(fb.Stages)
	rs := *s.Routes["free"]
	rs.Stage, rs.StageSince = last, t1
	for _, sc := range []evaluator.Score{{Value: 100, Low: 100}, {Value: 100, Low: fb.MinScore - 20}} {
		rs.Score = sc
		for _, now := range []time.Time{t1.Add(time.Minute), t1.Add(fb.Observe + time.Minute)} {
			lines := evaluator.WaitTexts(evaluator.Waiting(p, rs, now))
			if strings.Contains(strings.Join(lines, "\n"), "next stage") || !strings.Contains(lines[0], fmt.Sprintf("failback stage %d of %d", last, last)) ||
				!strings.Contains(lines[0], "the failback completes") {
				t.Errorf("stage %d of %d (low %.0f) at +%s waits for %q", last, last, sc.Low, now.Sub(t1), lines)
			}
			if w := waitsFor(p, rs, now); len(w) == 0 || !strings.HasSuffix(w[0], "for the failback to complete") {
				t.Errorf("stage %d of %d: the row waits for %q", last, last, w)
			}
		}
	}
	rs.Stage, rs.Score = 1, evaluator.Score{Value: 100, Low: fb.MinScore - 20}
	if w := waitsFor(p, rs, t1.Add(fb.Observe+time.Minute)); len(w) == 0 ||
		w[0] != fmt.Sprintf("its calls to show a score ≥ %g (they show at least %.1f), for failback stage 2 (%d%%)", fb.MinScore, fb.MinScore-20, fb.Stages[1]) {
		t.Errorf("stage 1 short of evidence waits for %q", w)
	}
}
