package evaluator

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/traffic"
)

// calls is a counted sample of failed failing calls of n.
func calls(failed, n float64) Sample {
	return Sample{Value: failed / n, Volume: n, Counted: true}
}

// stageSnap is free a minute into a first failback stage: its own and
// 3m and 5m windows hold only the stage's few calls, none failing; its
// 15m windows also hold the error templates from before its failover (40
// of 200 calls).
func stageSnap(p *Policy, t time.Time) Snapshot {
	w := func(sig string, d time.Duration) string { return "free." + rules.WindowColumn(sig, d) }
	return snap(p, t, map[string]any{
		"free.soft_fail_ratio":                calls(0, 6),
		w("soft_fail_ratio", 5*time.Minute):   calls(0, 8),
		w("soft_fail_ratio", 15*time.Minute):  calls(40, 200),
		"free.error_body_ratio":               calls(0, 8),
		w("error_body_ratio", 3*time.Minute):  calls(0, 8),
		w("error_body_ratio", 5*time.Minute):  calls(0, 8),
		w("error_body_ratio", 15*time.Minute): calls(40, 200),
	})
}

// stageState is free failed over at t0 on error templates, quiet since
// quiet (zero: unknown), at stage 1 since t0+11m.
func stageState(t0, quiet time.Time) RouteState {
	return RouteState{
		SavedRoute: SavedRoute{Level: traffic.Failover, Since: t0, Stage: 1, StageSince: t0.Add(11 * time.Minute)},
		Causes:     []Cause{{Signal: "soft_fail_ratio", Share: 0.1}, {Signal: "error_body_ratio", Share: 0.09}},
		Move:       &Move{Incident: t0, At: t0, To: traffic.Failover, QuietSince: quiet},
	}
}

// TestStageJudgedOnCallsSinceQuiet: a first stage whose 15m windows still
// hold the failure from before the failover is judged on the calls since
// the route stopped serving users. Without the time it went quiet (as
// before the rule, or restored without it) the leftovers cost it more
// than the failover line, and its stage aborts after the dwell.
func TestStageJudgedOnCallsSinceQuiet(t *testing.T) {
	p := defaultPolicy(t)
	t0 := time.Unix(0, 0).UTC()
	now := t0.Add(12 * time.Minute)
	free := p.routeIndex["free"]
	score := func(rs RouteState) Score {
		return newRouteSamples(p, stageSnap(p, now)).score(free, false, scopeAt(&rs, now))
	}

	quiet := stageState(t0, t0.Add(time.Minute))
	if sc := score(quiet); sc.Value < 100 || contribution(t, sc, "error_body_ratio").Penalty > 0 {
		t.Errorf("quiet since 11m: score %.1f, want 100 on the calls since (%v)", sc.Value, sc.Reasons())
	}
	unknown := stageState(t0, time.Time{})
	if sc := score(unknown); sc.Value >= p.level(traffic.Failover).Below {
		t.Errorf("quiet time unknown: score %.1f, want the leftovers judged, below %g (%v)", sc.Value, p.level(traffic.Failover).Below, sc.Reasons())
	}
	// A record of another failover does not count.
	stale := stageState(t0, t0.Add(-time.Minute))
	if got := quietFor(&stale, now); got >= 0 {
		t.Errorf("quiet since before the failover: quietFor %v, want unknown", got)
	}

	// The 15m windows turn clean 15 minutes after the route went quiet,
	// and the stage's calls in them count again.
	later := t0.Add(17 * time.Minute)
	if sc := newRouteSamples(p, stageSnap(p, later)).score(free, false, scopeAt(&quiet, later)); contribution(t, sc, "error_body_ratio").Penalty == 0 {
		t.Errorf("16m after the route went quiet the 15m window's 70 of 700 calls cost nothing: %v", sc.Reasons())
	}
}

// TestNoCleanWindowYet: a cause whose own window still holds calls from
// before the route went quiet shows no failure and rules out nothing:
// the stage waits, and says until when.
func TestNoCleanWindowYet(t *testing.T) {
	p := defaultPolicy(t)
	// The timers of `hermes lab --fast`: a stage starts and is observed
	// within a minute or two of the failover.
	p.Config.Failback.Observe = 30 * time.Second
	t0 := time.Unix(0, 0).UTC()
	rs := stageState(t0, t0.Add(time.Minute))
	now := t0.Add(2*time.Minute + 30*time.Second) // error_body_ratio's 2m window began 30 s before the route went quiet
	rs.StageSince = t0.Add(2 * time.Minute)
	sc := newRouteSamples(p, stageSnap(p, now)).score(p.routeIndex["free"], false, scopeAt(&rs, now))
	if c := contribution(t, sc, "error_body_ratio"); c.Penalty > 0 || c.Volume != 0 {
		t.Errorf("error_body_ratio without a clean window: penalty %.1f of %g calls, want none of 0", c.Penalty, c.Volume)
	}
	if sc.Low >= p.Config.Failback.MinScore {
		t.Errorf("low %.1f: a cause without a clean window ruled out its failure", sc.Low)
	}
	rs.Score = sc
	lines := strings.Join(WaitTexts(Waiting(p, rs, now)), "\n")
	if !strings.Contains(lines, "error_body_ratio: judged on the calls since the route stopped serving users at 1970-01-01T00:01:00Z; its 2m window holds only those from 1970-01-01T00:03:00Z") {
		t.Errorf("the stage does not say what it waits for:\n%s", lines)
	}
}

// TestQuietSinceKept: when a failed-over route went quiet is set at its
// first idle tick without calls, cleared when it serves again at stage 0
// or its failback steps back to no traffic, kept during its stages, and
// kept in the local state file's move record.
func TestQuietSinceKept(t *testing.T) {
	p := defaultPolicy(t)
	t0 := time.Unix(0, 0).UTC()
	free := p.routeIndex["free"]
	noCalls := Sample{Status: StatusMissing, Counted: true, Reason: "no calls"}
	idleSnap := snap(p, t0, map[string]any{"free.soft_fail_ratio": noCalls, "free.hard_fail_ratio": noCalls})
	rs := stageState(t0, time.Time{})
	rs.Stage, rs.StageSince = 0, time.Time{}

	rs.Score = newRouteSamples(p, stageSnap(p, t0)).score(free, true, scopeAt(&rs, t0))
	if got := withQuiet(p, rs, true, t0); !got.Move.QuietSince.IsZero() {
		t.Errorf("calls in its 1m window: quiet since %v, want unset", got.Move.QuietSince)
	}
	at := t0.Add(time.Minute)
	rs.Score = newRouteSamples(p, idleSnap).score(free, true, scopeAt(&rs, at))
	quiet := withQuiet(p, rs, true, at)
	if !quiet.Move.QuietSince.Equal(at) || rs.Move.QuietSince.IsZero() == false {
		t.Fatalf("first tick without calls: quiet since %v (record written in place: %v), want %v", quiet.Move.QuietSince, !rs.Move.QuietSince.IsZero(), at)
	}
	if again := withQuiet(p, quiet, true, at.Add(time.Minute)); !again.Move.QuietSince.Equal(at) {
		t.Errorf("a later quiet tick moved quiet since to %v", again.Move.QuietSince)
	}
	serving := quiet
	serving.Score = newRouteSamples(p, stageSnap(p, at)).score(free, false, recoveryScope{quiet: -1})
	if got := withQuiet(p, serving, false, at.Add(time.Minute)); !got.Move.QuietSince.IsZero() {
		t.Errorf("serving users at stage 0: quiet since %v, want cleared", got.Move.QuietSince)
	}
	staged := serving
	staged.Stage = 1
	if got := withQuiet(p, staged, false, at.Add(time.Minute)); !got.Move.QuietSince.Equal(at) {
		t.Errorf("a stage's calls cleared quiet since: %v", got.Move.QuietSince)
	}
	if m := withAbort(p, quiet.Move, 1, "failback aborted: score 30.5 < 60 for 2m0s", at); !m.QuietSince.IsZero() {
		t.Errorf("an aborted failback kept quiet since %v", m.QuietSince)
	}

	b, err := json.Marshal(quiet.Move)
	if err != nil {
		t.Fatal(err)
	}
	var back Move
	if err := json.Unmarshal(b, &back); err != nil || !back.QuietSince.Equal(at) {
		t.Errorf("the move record's JSON %s restores quiet since %v (%v), want %v", b, back.QuietSince, err, at)
	}
}
