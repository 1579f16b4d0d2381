package backtest

import (
	"encoding/json"
	"fmt"
	"io"
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
	// CurrentName and CandidateName name the two policies: their files
	// (`--compare A --compare B`), or "current" and "candidate".
	CurrentName, CandidateName string
	Current                    Summary
	Candidate                  Summary
	// Differences are the decisions (level changes, failback stages,
	// splits and alerts) of one policy that the other did not make at the
	// same tick, scores and reasons aside, in time order: the shape the
	// live shadow policy reports too (evaluator.Difference).
	Differences []evaluator.Difference
	// OnlyCurrent and OnlyCandidate are the events of Differences, by
	// the policy that made them.
	OnlyCurrent, OnlyCandidate []evaluator.Event
}

// Compare replays nothing: it compares two timelines of the same history,
// cur under the current policy and cand under the candidate. degraded is
// the ground truth both summaries count minutes against; nil judges each
// timeline by its own levels (BelowNormal).
func Compare(cur, cand *Timeline, degraded Degraded) Comparison {
	return CompareNamed("current", cur, "candidate", cand, degraded)
}

// CompareNamed is Compare with the two policies named, e.g. by their
// files; the names head the columns and mark each differing decision.
func CompareNamed(curName string, cur *Timeline, candName string, cand *Timeline, degraded Degraded) Comparison {
	if curName == candName {
		curName, candName = curName+" (1)", candName+" (2)"
	}
	c := Comparison{Start: cur.Start, End: cur.End, Step: cur.Step, CurrentName: curName, CandidateName: candName,
		Current: Summarize(cur, degraded), Candidate: Summarize(cand, degraded)}
	c.Differences = evaluator.Differences(evaluator.Decisions{Name: curName, Events: cur.Events}, evaluator.Decisions{Name: candName, Events: cand.Events})
	for _, d := range c.Differences {
		if d.By == curName {
			c.OnlyCurrent = append(c.OnlyCurrent, d.Event)
		} else {
			c.OnlyCandidate = append(c.OnlyCandidate, d.Event)
		}
	}
	return c
}

// Same reports whether both policies made the same decisions.
func (c Comparison) Same() bool { return len(c.Differences) == 0 }

// Rows are the summary's figures as text, in the order of SummaryLabels.
func (s Summary) Rows() []string {
	return []string{fmt.Sprint(s.Detected), fmt.Sprint(s.Moves), fmt.Sprint(s.Shed), fmt.Sprint(s.FailedOver),
		fmt.Sprint(s.FailedBack), fmt.Sprint(s.Pages), fmt.Sprintf("%.1f", s.DegradedMinutes)}
}

// SummaryLabels name the rows of a summary, for people.
var SummaryLabels = []string{"routes detected", "moves", "moves into shed", "failed over", "failed back", "pages sent", "minutes on a degraded route"}

// WriteText prints the comparison for people: the two summaries side by
// side, then every decision that differs, in time order, each ending with
// what the other policy did instead: "(current stayed normal)".
func (c Comparison) WriteText(w io.Writer) error {
	tl := &Timeline{Start: c.Start}
	fmt.Fprintf(w, "compare %s → %s, step %s\n", c.Start.UTC().Format(time.RFC3339), c.End.UTC().Format(time.RFC3339), model.Duration(c.Step))
	width := max(9, len(c.CurrentName), len(c.CandidateName))
	fmt.Fprintf(w, "%-28s %*s %*s\n", "", width, c.CurrentName, width, c.CandidateName)
	cur, cand := c.Current.Rows(), c.Candidate.Rows()
	for i, label := range SummaryLabels {
		mark := ""
		if cur[i] != cand[i] {
			mark = "  *"
		}
		fmt.Fprintf(w, "%-28s %*s %*s%s\n", label, width, cur[i], width, cand[i], mark)
	}
	if c.Same() {
		_, err := fmt.Fprintln(w, "\nthe two policies made the same decisions")
		return err
	}
	fmt.Fprintf(w, "\n%d decision(s) only under %s, %d only under %s:\n", len(c.OnlyCurrent), c.policyName(c.CurrentName), len(c.OnlyCandidate), c.policyName(c.CandidateName))
	for _, d := range c.Differences {
		if _, err := fmt.Fprintf(w, "%-*s  %s  (%s %s)\n", width, d.By, tl.formatEvent(d.Event), d.Other, d.Instead); err != nil {
			return err
		}
	}
	return nil
}

// policyName is how the text refers to a policy: "the current policy",
// "the candidate", or a file's name as given.
func (c Comparison) policyName(name string) string {
	switch name {
	case "current":
		return "the current policy"
	case "candidate":
		return "the candidate"
	}
	return name
}

// WriteJSON prints the comparison as one JSON object:
// {"start","end","step","current_name","candidate_name",
// "current":{summary},"candidate":{summary},"only_current":[events],
// "only_candidate":[events],"differences":[evaluator.Difference]}.
func (c Comparison) WriteJSON(w io.Writer) error {
	utc := func(evs []evaluator.Event) []evaluator.Event {
		out := make([]evaluator.Event, len(evs))
		for i, e := range evs {
			e.Time = e.Time.UTC()
			out[i] = e
		}
		return out
	}
	diffs := make([]evaluator.Difference, len(c.Differences))
	for i, d := range c.Differences {
		d.Event.Time = d.Event.Time.UTC()
		diffs[i] = d
	}
	out := struct {
		Start         string                 `json:"start"`
		End           string                 `json:"end"`
		Step          string                 `json:"step"`
		CurrentName   string                 `json:"current_name"`
		CandidateName string                 `json:"candidate_name"`
		Current       Summary                `json:"current"`
		Candidate     Summary                `json:"candidate"`
		OnlyCurrent   []evaluator.Event      `json:"only_current"`
		OnlyCandidate []evaluator.Event      `json:"only_candidate"`
		Differences   []evaluator.Difference `json:"differences"`
	}{c.Start.UTC().Format(time.RFC3339), c.End.UTC().Format(time.RFC3339), model.Duration(c.Step).String(),
		c.CurrentName, c.CandidateName, c.Current, c.Candidate, utc(c.OnlyCurrent), utc(c.OnlyCandidate), diffs}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// Decisions returns the differing decisions of both policies in time
// order, each with the name of the policy that made it.
func (c Comparison) Decisions() []PolicyEvent {
	out := make([]PolicyEvent, len(c.Differences))
	for i, d := range c.Differences {
		out[i] = PolicyEvent{Policy: d.By, Event: d.Event}
	}
	return out
}

// PolicyEvent is a decision and the policy that made it.
type PolicyEvent struct {
	Policy string
	Event  evaluator.Event
}
