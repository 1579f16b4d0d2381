package backtest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/evaluator"
)

// Comparison is where two policies replayed over the same history differ:
// each one's summary, and the decisions one made that the other did not
// make at the same tick. `hermes backtest --compare` prints it.
type Comparison struct {
	Start, End time.Time
	Step       time.Duration
	Current    Summary
	Candidate  Summary
	// OnlyCurrent and OnlyCandidate are the level changes, failback
	// stages, splits and alerts of one policy that the other did not
	// decide at the same tick (scores and reasons aside), in time order.
	OnlyCurrent, OnlyCandidate []evaluator.Event
}

// Compare replays nothing: it compares two timelines of the same history,
// cur under the current policy and cand under the candidate. degraded is
// the ground truth both summaries count minutes against; nil judges each
// timeline by its own levels (BelowNormal).
func Compare(cur, cand *Timeline, degraded Degraded) Comparison {
	c := Comparison{Start: cur.Start, End: cur.End, Step: cur.Step,
		Current: Summarize(cur, degraded), Candidate: Summarize(cand, degraded)}
	c.OnlyCurrent = missingFrom(cur.Events, cand.Events)
	c.OnlyCandidate = missingFrom(cand.Events, cur.Events)
	return c
}

// Same reports whether both policies made the same decisions.
func (c Comparison) Same() bool { return len(c.OnlyCurrent) == 0 && len(c.OnlyCandidate) == 0 }

// missingFrom returns the decisions of a that b lacks, counting repeats.
func missingFrom(a, b []evaluator.Event) []evaluator.Event {
	have := map[string]int{}
	for _, e := range b {
		if k, ok := decision(e); ok {
			have[k]++
		}
	}
	var out []evaluator.Event
	for _, e := range a {
		k, ok := decision(e)
		if !ok {
			continue
		}
		if have[k] > 0 {
			have[k]--
			continue
		}
		out = append(out, e)
	}
	return out
}

// decision is what identifies an event as a decision: its tick, kind,
// target and outcome; scores, reasons and annotations are left out, so
// that the same move for slightly different numbers is the same move.
func decision(e evaluator.Event) (string, bool) {
	var what string
	switch e.Type {
	case evaluator.EventLevel:
		what = e.From + "→" + e.To
	case evaluator.EventFailback:
		what = fmt.Sprintf("stage %d", deref(e.Stage))
	case evaluator.EventTraffic:
		var parts []string
		for _, r := range slices.Sorted(maps.Keys(e.Weights)) {
			parts = append(parts, fmt.Sprintf("%s=%d", r, e.Weights[r]))
		}
		what = strings.Join(parts, ",")
	case evaluator.EventAlert:
		what = e.Name + " " + e.State
	default:
		return "", false
	}
	return fmt.Sprintf("%d %s %s/%s %s", e.Time.UnixMilli(), e.Type, e.Service, e.Route, what), true
}

// Rows are the summary's figures as text, in the order of SummaryLabels.
func (s Summary) Rows() []string {
	return []string{fmt.Sprint(s.Detected), fmt.Sprint(s.Moves), fmt.Sprint(s.Shed), fmt.Sprint(s.FailedOver),
		fmt.Sprint(s.FailedBack), fmt.Sprint(s.Pages), fmt.Sprintf("%.1f", s.DegradedMinutes)}
}

// SummaryLabels name the rows of a summary, for people.
var SummaryLabels = []string{"routes detected", "moves", "moves into shed", "failed over", "failed back", "pages sent", "minutes on a degraded route"}

// WriteText prints the comparison for people: the two summaries side by
// side, then every decision that differs, in time order.
func (c Comparison) WriteText(w io.Writer) error {
	tl := &Timeline{Start: c.Start}
	fmt.Fprintf(w, "compare %s → %s, step %s\n", c.Start.UTC().Format(time.RFC3339), c.End.UTC().Format(time.RFC3339), model.Duration(c.Step))
	fmt.Fprintf(w, "%-28s %9s %9s\n", "", "current", "candidate")
	cur, cand := c.Current.Rows(), c.Candidate.Rows()
	for i, label := range SummaryLabels {
		mark := ""
		if cur[i] != cand[i] {
			mark = "  *"
		}
		fmt.Fprintf(w, "%-28s %9s %9s%s\n", label, cur[i], cand[i], mark)
	}
	if c.Same() {
		_, err := fmt.Fprintln(w, "\nthe two policies made the same decisions")
		return err
	}
	fmt.Fprintf(w, "\n%d decision(s) only under the current policy, %d only under the candidate:\n", len(c.OnlyCurrent), len(c.OnlyCandidate))
	for _, d := range c.Decisions() {
		if _, err := fmt.Fprintf(w, "%-9s  %s\n", d.Policy, tl.formatEvent(d.Event)); err != nil {
			return err
		}
	}
	return nil
}

// WriteJSON prints the comparison as one JSON object:
// {"start","end","step","current":{summary},"candidate":{summary},
// "only_current":[events],"only_candidate":[events]}.
func (c Comparison) WriteJSON(w io.Writer) error {
	utc := func(evs []evaluator.Event) []evaluator.Event {
		out := make([]evaluator.Event, len(evs))
		for i, e := range evs {
			e.Time = e.Time.UTC()
			out[i] = e
		}
		return out
	}
	out := struct {
		Start         string            `json:"start"`
		End           string            `json:"end"`
		Step          string            `json:"step"`
		Current       Summary           `json:"current"`
		Candidate     Summary           `json:"candidate"`
		OnlyCurrent   []evaluator.Event `json:"only_current"`
		OnlyCandidate []evaluator.Event `json:"only_candidate"`
	}{c.Start.UTC().Format(time.RFC3339), c.End.UTC().Format(time.RFC3339), model.Duration(c.Step).String(),
		c.Current, c.Candidate, utc(c.OnlyCurrent), utc(c.OnlyCandidate)}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// Decisions returns the differing decisions of both policies in time
// order, each with the policy that made it ("current" or "candidate").
func (c Comparison) Decisions() []PolicyEvent {
	var out []PolicyEvent
	for _, e := range c.OnlyCurrent {
		out = append(out, PolicyEvent{Policy: "current", Event: e})
	}
	for _, e := range c.OnlyCandidate {
		out = append(out, PolicyEvent{Policy: "candidate", Event: e})
	}
	slices.SortStableFunc(out, func(a, b PolicyEvent) int { return cmp.Compare(a.Event.Time.UnixNano(), b.Event.Time.UnixNano()) })
	return out
}

// PolicyEvent is a decision and the policy that made it.
type PolicyEvent struct {
	Policy string
	Event  evaluator.Event
}
