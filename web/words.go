package web

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/promapi"
	"github.com/hermes-failover/hermes/runner"
	"github.com/hermes-failover/hermes/traffic"
	"github.com/hermes-failover/hermes/web/api"
)

// connectionReason is promapi.ErrorReason's class of a query that could
// not reach Prometheus.
const connectionReason = promapi.ReasonConnection

// problemWords say in words what the failed signal queries probs of a
// tick (of nSignals signals) mean: Prometheus unreachable, or which
// query fails and how.
func problemWords(probs []runner.SignalProblem, nSignals int) []string {
	var out []string
	var unreachable []string
	detail := ""
	for _, p := range probs {
		if p.Reason == connectionReason {
			if detail == "" {
				detail = p.Detail
			}
			unreachable = append(unreachable, p.Signal)
		}
	}
	if len(unreachable) > 0 {
		if detail == "" {
			detail = "connection failed"
		}
		if len(unreachable) >= nSignals {
			out = append(out, "Prometheus unreachable: "+detail)
		} else {
			out = append(out, fmt.Sprintf("Prometheus unreachable for %d of %d signal queries (%s): %s",
				len(unreachable), nSignals, strings.Join(unreachable, ", "), detail))
		}
	}
	for _, p := range probs {
		if p.Reason != connectionReason {
			out = append(out, "query failing: "+p.Signal+": "+failureText(p))
		}
	}
	return out
}

// failureText is the reason of p with its detail when that says more.
func failureText(p runner.SignalProblem) string {
	if p.Detail == "" || p.Detail == p.Reason {
		return p.Reason
	}
	return p.Reason + " (" + p.Detail + ")"
}

// whyMissing says why signal c of a route has no value, with the failed
// query behind it when there is one.
func whyMissing(c evaluator.Contribution, probs map[string]runner.SignalProblem) string {
	if p, ok := probs[c.Signal]; ok && c.Status == evaluator.StatusError && p.Reason == c.Reason {
		if p.Reason == connectionReason {
			return "Prometheus unreachable: " + cmpOr(p.Detail, "connection failed")
		}
		return "query failing: " + failureText(p)
	}
	if c.Status == evaluator.StatusError {
		return "query failing: " + cmpOr(c.ReasonText(), "error")
	}
	return cmpOr(c.ReasonText(), "no data")
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// scoreState says whether sc was judged at its tick (see api.ScoreJudged).
func scoreState(sc evaluator.Score) string {
	switch {
	case sc.Carried:
		return api.ScoreCarried
	case sc.Held():
		return api.ScoreNotJudged
	}
	return api.ScoreJudged
}

// routeReasons are the reasons of sc, the missing signals grouped by why
// they have no data.
func routeReasons(sc evaluator.Score, probs map[string]runner.SignalProblem) []string {
	// The reasons of the signals that answered, without the bare
	// "missing" lines: those are said below with their cause.
	out := append([]string{}, evaluator.Score{Contributions: sc.Contributions}.Reasons()...)
	causes, signals := missingCauses(sc, probs)
	for i, why := range causes {
		out = append(out, strings.Join(signals[i], ", ")+" missing: "+why+" (level held)")
	}
	return out
}

// missingCauses are the distinct reasons why signals of sc are missing,
// in the order of sc.Missing, with the signals of each.
func missingCauses(sc evaluator.Score, probs map[string]runner.SignalProblem) (causes []string, signals [][]string) {
	for _, m := range sc.Missing {
		why := whyMissing(contribution(sc, m), probs)
		i := slices.Index(causes, why)
		if i < 0 {
			i = len(causes)
			causes, signals = append(causes, why), append(signals, nil)
		}
		signals[i] = append(signals[i], m)
	}
	return causes, signals
}

func contribution(sc evaluator.Score, signal string) evaluator.Contribution {
	for _, c := range sc.Contributions {
		if c.Signal == signal {
			return c
		}
	}
	return evaluator.Contribution{Signal: signal}
}

// routeState says route state rs in words at now under p: its level and
// what the level waits for (evaluator.Waiting), why its score is held and
// whether it is idle.
func routeState(p *evaluator.Policy, rs evaluator.RouteState, now time.Time, probs map[string]runner.SignalProblem) []string {
	sc := rs.Score
	var out []string
	waits := evaluator.WaitTexts(evaluator.Waiting(p, rs, now))
	level := ""
	switch {
	case rs.Level == traffic.Failover && rs.Stage > 0:
		level = "failing back"
	case rs.Level == traffic.Failover:
		level = "failed over"
		if len(waits) == 0 && sc.Held() {
			waits = []string{"the failback waits for data"}
		}
	case rs.Level == traffic.Normal && len(waits) == 0:
	default:
		level = rs.Level.String()
	}
	if level != "" {
		line := level + " since " + rs.Since.UTC().Format(time.RFC3339)
		if len(waits) > 0 {
			line += ": " + strings.Join(waits, "; ")
		}
		out = append(out, line)
	}
	if sc.Held() {
		causes, _ := missingCauses(sc, probs)
		line := "held: " + strings.Join(causes, "; ")
		switch scoreState(sc) {
		case api.ScoreCarried:
			line += fmt.Sprintf("; the score %.1f is carried from the last tick with full data", sc.Value)
		case api.ScoreNotJudged:
			line += "; not judged yet: the score is not a measurement"
		}
		out = append(out, line)
	}
	if evaluator.JudgedByProbes(p, sc) {
		out = append(out, "idle: judged by its probes alone")
	}
	return out
}

// waitsFor says in one line what route state rs waits for at now under p,
// with the time still to wait when a clock decides ("6m more with a score
// ≥ 80, for failback stage 1") or the calls when evidence does: the row's
// "waits for" cell. The long form, with every clock, is in the route's
// state (evaluator.Waiting). Empty for a normal route with no dwell
// running.
func waitsFor(p *evaluator.Policy, rs evaluator.RouteState, now time.Time) []string {
	sc := rs.Score
	left := func(at time.Time) string {
		if !at.After(now) {
			return "the next tick"
		}
		return at.Sub(now).Round(time.Second).String() + " more (" + at.UTC().Format("15:04:05Z") + ")"
	}
	// calls are the lines of evaluator.Waiting that count the calls
	// evidence still wants ("hard_fail_ratio: 420 of about 950 calls …").
	calls := func() []string {
		var out []string
		for _, w := range evaluator.Waiting(p, rs, now) {
			if w.Kind == evaluator.WaitCalls {
				out = append(out, w.Text)
			}
		}
		return out
	}
	floor := max(sc.Floor, sc.LowFloor)
	switch rs.Level {
	case traffic.Manual:
		return []string{"an operator's release: automation does not move a manual route"}
	case traffic.Normal:
		for l := traffic.Failover; l > traffic.Normal; l-- {
			if since := rs.BelowSince[l]; !since.IsZero() {
				lc := p.Level(l)
				return []string{fmt.Sprintf("moves to %s in %s if it stays below %g and its calls prove it then", l, left(since.Add(lc.Dwell)), lc.Below)}
			}
		}
		return nil
	case traffic.Failover:
		fb := p.Config.Failback
		if rs.Stage > 0 {
			target := "the failback to complete" // the last stage has no next
			if rs.Stage < len(fb.Stages) {
				target = fmt.Sprintf("failback stage %d (%d%%)", rs.Stage+1, fb.Stages[rs.Stage])
			}
			next := rs.StageSince.Add(fb.Observe)
			switch {
			case sc.Held():
				return []string{"data: signals without data hold failback stage " + strconv.Itoa(rs.Stage)}
			case now.Before(next):
				return []string{fmt.Sprintf("%s with a score ≥ %g, for %s", left(next), fb.MinScore, target)}
			case sc.Low < fb.MinScore:
				return append([]string{fmt.Sprintf("its calls to show a score ≥ %g (they show at least %.1f), for %s", fb.MinScore, sc.Low, target)}, calls()...)
			}
			return []string{"the next tick, for " + target}
		}
		lc := p.Level(traffic.Failover)
		target := fmt.Sprintf("failback stage 1 (%d%%)", firstStage(fb.Stages))
		switch {
		case sc.Held():
			return []string{"data: signals without data hold the failover"}
		case floor >= traffic.Failover:
			return []string{"a floor to lift (" + floorSignals(sc) + "), for " + target}
		case sc.Value < lc.RecoverAbove:
			return []string{fmt.Sprintf("a score ≥ %g (now %.1f), then %s above it, for %s", lc.RecoverAbove, sc.Value, lc.RecoverFor, target)}
		case sc.Low < lc.RecoverAbove:
			return append([]string{fmt.Sprintf("its calls to show a score ≥ %g (they show at least %.1f), for %s", lc.RecoverAbove, sc.Low, target)}, calls()...)
		}
		at := laterOf(rs.RecoverSince.Add(lc.RecoverFor), rs.Since.Add(lc.Cooldown))
		if rs.RecoverSince.IsZero() {
			at = laterOf(now.Add(lc.RecoverFor), rs.Since.Add(lc.Cooldown))
		}
		if next := evaluator.NextFailbackAllowed(p, rs); next.After(at) {
			return []string{fmt.Sprintf("the failback budget: %s, for %s", left(next), target)}
		}
		return []string{fmt.Sprintf("%s with a score ≥ %g, for %s", left(at), lc.RecoverAbove, target)}
	}
	// Warm or shed.
	lc, up := p.Level(rs.Level), rs.Level-1
	switch {
	case sc.Held():
		return []string{"data: signals without data hold " + rs.Level.String()}
	case floor >= rs.Level:
		return []string{"a floor to lift (" + floorSignals(sc) + "), to return to " + up.String()}
	case sc.Value < lc.RecoverAbove:
		return []string{fmt.Sprintf("a score ≥ %g (now %.1f), then %s above it, to return to %s", lc.RecoverAbove, sc.Value, lc.RecoverFor, up)}
	case sc.Low < lc.RecoverAbove:
		return append([]string{fmt.Sprintf("its calls to show a score ≥ %g (they show at least %.1f), to return to %s", lc.RecoverAbove, sc.Low, up)}, calls()...)
	}
	at := laterOf(rs.RecoverSince.Add(lc.RecoverFor), rs.Since.Add(lc.Cooldown))
	if rs.RecoverSince.IsZero() {
		at = laterOf(now.Add(lc.RecoverFor), rs.Since.Add(lc.Cooldown))
	}
	return []string{fmt.Sprintf("%s with a score ≥ %g, to return to %s", left(at), lc.RecoverAbove, up)}
}

func firstStage(stages []int) int {
	if len(stages) == 0 {
		return 100
	}
	return stages[0]
}

// floorSignals names the signals of sc whose floor holds the route.
func floorSignals(sc evaluator.Score) string {
	var out []string
	for _, c := range sc.Contributions {
		if c.Status == evaluator.StatusOK && c.Floor > traffic.Normal {
			out = append(out, c.Signal)
		}
	}
	return cmpOr(strings.Join(out, ", "), "a floor rule")
}

func laterOf(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// splitUnknownText says that Hermes does not know service svc's split,
// and why.
func splitUnknownText(svc string) string {
	return "the split of " + svc + " is unknown (the restart could not learn what the backends hold, and no tick has decided it on data since)"
}

// heldWords says in words why the last tick wrote service svc to no
// backend (a reason of runner.View.Held).
func heldWords(why, svc string) string {
	switch why {
	case runner.HeldUnknownSplit:
		return splitUnknownText(svc) + ": Hermes writes nothing for " + svc + " until it knows one; the backends keep what they hold"
	case runner.HeldNoData:
		return "the last tick had no data from Prometheus: Hermes writes nothing for " + svc + " until a tick has data; the backends keep what they hold"
	case runner.HeldReplicasDisagree:
		return "another replica holds the backend and wrote a different split: this replica writes nothing for " + svc
	}
	return why
}

// splitNote says what a pin, pause or clear of service svc leaves undone
// because Hermes does not know svc's split; "" when it knows it.
func splitNote(kind evaluator.CommandKind, svc api.Service) string {
	held := ": Hermes writes nothing for " + svc.Name + " until it knows one; the backends keep what they hold"
	switch {
	case svc.SplitUnknown && kind == evaluator.CommandPause:
		return "paused, but " + splitUnknownText(svc.Name) + held + "; the pause freezes nothing (pin a route to choose the split)"
	case svc.SplitUnknown && kind == evaluator.CommandClear:
		return "cleared, but " + splitUnknownText(svc.Name) + held
	case svc.SplitUnknownAfterOverride && kind == evaluator.CommandPin:
		return "pinned: Hermes writes the pin's split, but without it " + splitUnknownText(svc.Name) + "; once the pin ends" + held
	case svc.SplitUnknownAfterOverride && kind == evaluator.CommandPause:
		return "paused: Hermes writes the split the pause froze, but without it " + splitUnknownText(svc.Name) + "; once the pause ends" + held
	}
	return ""
}
