package web

import (
	"fmt"
	"slices"
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
	waits := evaluator.Waiting(p, rs, now)
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
