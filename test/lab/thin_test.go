package lab_test

import (
	"fmt"
	"math"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/internal/testenv"
)

// TestLabThinFailback is issue 33's thin failback, live: a service of
// 3 req/s (`hermes lab --fast --rate 3`: its failback's first stage
// carries 0.3 req/s) whose free route answers 30 % of its calls with an
// error template inside HTTP 200 fails over; while it is still broken,
// for several times the failover level's cooldown and recover_for, no
// failback stage starts and nginx sends it no call; once healed, its
// failback completes within 2 × (stages × observe) of the heal, as the
// lab's policy (DIR/hermes.yaml) sets them, plus what --fast does not
// divide (the evidence windows, and the calls a first stage needs at the
// real rate; see bound). Every status read of the hold and every change
// of the failback is logged.
func TestLabThinFailback(t *testing.T) {
	const rate = 3.0
	l := startLab(t, "--fast", "--rate", fmt.Sprint(rate))
	t.Cleanup(func() {
		if t.Failed() {
			l.explain("free")
		}
	})
	cfg := l.policy()
	tick := cfg.Global.EvaluationInterval
	var cooldown, recoverFor time.Duration
	for _, lv := range cfg.Levels {
		if lv.Name == "failover" {
			cooldown, recoverFor = lv.Cooldown, lv.RecoverFor
		}
	}
	if cooldown == 0 || recoverFor == 0 {
		t.Fatalf("the lab's policy has no failover level with a cooldown and recover_for: %+v", cfg.Levels)
	}
	// The hold: long enough for a failback to have started several times
	// over, had the probes or anything else let it (a start needs the
	// level's cooldown spent and the score held for recover_for).
	hold := 4 * max(cooldown, recoverFor)
	stages, observe := cfg.Failback.Stages, cfg.Failback.Observe
	pol := cfg.Rules()
	var probeWindow time.Duration
	for _, sig := range pol.Signals {
		if sig.Name == "probe_e2e_success" {
			probeWindow = sig.Derived.Own
		}
	}
	if probeWindow == 0 {
		t.Fatal("the lab's policy has no probe_e2e_success counted over a window")
	}
	t.Logf("the lab's policy: tick %s; failover cooldown %s, recover_for %s (hold %s); failback stages %v%%, observe %s; probe_e2e_success counts its results over %s",
		tick, cooldown, recoverFor, hold, stages, observe, probeWindow)

	testenv.EventuallyDetail(t, 2*time.Minute, "free normal with all of chat's calls", func() (bool, string) {
		r := l.status("free")
		v, detail := l.calls("free")
		return r.Level == "normal" && r.Traffic == 100 && v > rate/2, detail
	})

	l.labCmd("fault", "free", "30%", "error_body")
	testenv.EventuallyDetail(t, 5*time.Minute, "free failed over", func() (bool, string) {
		r := l.status("free")
		return r.Level == "failover" && r.Traffic == 0, r.String()
	})
	testenv.EventuallyDetail(t, time.Minute, "nginx sending free no calls and paid-standard all", func() (bool, string) {
		free, d1 := l.calls("free")
		paid, d2 := l.calls("paid-standard")
		return free == 0 && paid > rate/2, d1 + "; " + d2
	})

	// Still 30 % broken: every status read, one a tick, shows free failed
	// over at stage 0 with no traffic, and nginx sends it no call.
	start := time.Now()
	for n := 1; ; n++ {
		r := l.status("free")
		v, _ := l.calls("free")
		t.Logf("broken +%s: %s; nginx sends free %v calls/s", time.Since(start).Round(time.Second), r, v)
		if r.Level != "failover" || r.FailbackStage != 0 || r.Traffic != 0 || v != 0 {
			t.Fatalf("free, still 30 %% broken, left failover or got traffic %s after its failover was seen (read %d): %s; nginx sends it %v calls/s", time.Since(start).Round(time.Second), n, r, v)
		}
		if time.Since(start) >= hold {
			break
		}
		time.Sleep(tick)
	}
	t.Logf("free held failed over at stage 0 with no calls for %s while broken", time.Since(start).Round(time.Second))

	// What the evidence of the failback needs: the calls that rule out
	// the smallest failure share the move down showed (the status's
	// "moved" names each cause's "≥ X %"; a cause's share only grows
	// after, which needs fewer calls), at scoring.recovery_confidence:
	// (1-p)^n ≤ 1-confidence.
	moved := l.status("free").Moved
	share := 1.0
	for _, m := range regexp.MustCompile(`≥ ([0-9.]+) %`).FindAllStringSubmatch(moved, -1) {
		if p, err := strconv.ParseFloat(m[1], 64); err == nil && p > 0 {
			share = min(share, p/100)
		}
	}
	if share == 1 {
		t.Fatalf("free's move down names no failure share: %q", moved)
	}
	needed := math.Ceil(math.Log(1-pol.Scoring.RecoveryConfidence) / math.Log(1-share))
	stageRate := rate * float64(stages[0]) / 100
	stage1Calls := time.Duration(needed / stageRate * float64(time.Second))
	// A stage reads a cause's calls only in windows that begin after free
	// went quiet (evaluator/quiet.go): the shortest of the cause's windows
	// that holds the calls needed at stage 1's rate is clean at most that
	// long after the heal, since free went quiet before it.
	var callWindow time.Duration
	for _, sig := range pol.Signals {
		if sig.Volume == "" || !strings.Contains(moved, sig.Name+" ") {
			continue
		}
		for _, w := range append([]time.Duration{sig.Derived.Own}, sig.Windows...) {
			if w.Seconds()*stageRate >= needed {
				callWindow = max(callWindow, w)
				break
			}
		}
	}
	if callWindow == 0 {
		t.Fatalf("no window of free's causes holds %v calls at %v req/s: %q", needed, stageRate, moved)
	}
	// Issue 33's bound, 2 × (stages × observe) from the heal, is stated
	// for the shipped timers (2 h), in which what --fast does not divide
	// takes a few minutes and fits. --fast divides the timers (4 min
	// here), not these, so the bound adds them:
	//   - PromQL's windows: the e2e results from before the heal leave
	//     probe_e2e_success's window (probeWindow) at most that long after
	//     it, and the causes' callWindow is clean at most that long after
	//     it; the longer of the two (5m here, which the shipped timers'
	//     10m cooldown and recover_for of the failover level cover).
	//   - the calls: at the service's real rate a first stage needs
	//     stage1Calls to gather the calls that rule out the cause (the
	//     shipped observe, 15 min, holds them many times over; --fast's
	//     holds a few), and later stages carry more and read its calls too.
	// Hermes decides on its ticks and the status API shows a decision once
	// its tick has ended: one tick more.
	bound := 2*time.Duration(len(stages))*observe + max(probeWindow, callWindow) + stage1Calls + tick
	t.Logf("free moved on %q: the least share %.2f %%, ruled out by %v calls at %v, %s at stage 1's %v req/s, held by a window of %s; bound 2 × (%d × %s) + max(%s, %s) + %s + %s = %s",
		moved, 100*share, needed, pol.Scoring.RecoveryConfidence, stage1Calls.Round(time.Second), stageRate, callWindow,
		len(stages), observe, probeWindow, callWindow, stage1Calls.Round(time.Second), tick, bound.Round(time.Second))

	l.labCmd("heal", "free")
	healed := time.Now()
	last, stage1 := "", time.Duration(0)
	testenv.EventuallyDetail(t, bound, "free's failback completed: normal, stage 0, all of its share", func() (bool, string) {
		r := l.status("free")
		since := time.Since(healed)
		if s := r.String(); s != last {
			t.Logf("healed +%s: %s", since.Round(time.Second), s)
			last = s
		}
		if r.FailbackStage >= 1 && stage1 == 0 {
			stage1 = since
		}
		return r.Level == "normal" && r.FailbackStage == 0 && r.Traffic == 100, fmt.Sprintf("%s after the heal (first stage after %s): %s", since.Round(time.Second), stage1.Round(time.Second), r)
	})
	t.Logf("free's failback completed %s after the heal, its first stage %s after it (bound %s)", time.Since(healed).Round(time.Second), stage1.Round(time.Second), bound.Round(time.Second))
	testenv.EventuallyDetail(t, time.Minute, "nginx sending free all of chat's calls again", func() (bool, string) {
		free, d1 := l.calls("free")
		paid, d2 := l.calls("paid-standard")
		return free > rate/2 && paid == 0, d1 + "; " + d2
	})
}

// explain logs `hermes explain --route name` of the lab's Hermes: why the
// route is where it is.
func (l *labRun) explain(name string) {
	l.t.Helper()
	out, err := exec.Command(l.hermes, "explain", "--route", name, "--url", l.u.Hermes).CombinedOutput()
	l.t.Logf("hermes explain --route %s (%v):\n%s", name, err, strings.TrimSpace(string(out)))
}
