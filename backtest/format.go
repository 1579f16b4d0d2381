package backtest

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/evaluator"
)

// WriteJSON prints the timeline as exactly one JSON object:
// {"start","end","step","events":[…]} with RFC 3339 UTC times, and
// "ticks":[…] when the backtest kept them (Options.Ticks).
func (tl *Timeline) WriteJSON(w io.Writer) error {
	events := tl.Events
	if events == nil {
		events = []evaluator.Event{}
	}
	for i := range events {
		events[i].Time = events[i].Time.UTC()
	}
	out := struct {
		Start  string            `json:"start"`
		End    string            `json:"end"`
		Step   string            `json:"step"`
		Events []evaluator.Event `json:"events"`
		Ticks  []evaluator.Tick  `json:"ticks,omitempty"`
	}{tl.Start.UTC().Format(time.RFC3339), tl.End.UTC().Format(time.RFC3339), model.Duration(tl.Step).String(), events, tl.Ticks}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	return enc.Encode(out)
}

// WriteText prints the timeline for people: one line per event, times as
// offsets from the start when it is the Unix epoch (series files), as UTC
// times otherwise.
func (tl *Timeline) WriteText(w io.Writer) error {
	fmt.Fprintf(w, "backtest %s → %s, step %s, %d events\n", tl.Start.UTC().Format(time.RFC3339), tl.End.UTC().Format(time.RFC3339), model.Duration(tl.Step), len(tl.Events))
	for _, e := range tl.Events {
		if _, err := fmt.Fprintln(w, tl.formatEvent(e)); err != nil {
			return err
		}
	}
	return nil
}

func (tl *Timeline) stamp(t time.Time) string {
	if tl.Start.Unix() == 0 {
		d := t.Sub(tl.Start)
		return fmt.Sprintf("%02d:%02d:%02d", int(d.Hours()), int(d.Minutes())%60, int(d.Seconds())%60)
	}
	return t.UTC().Format("2006-01-02 15:04:05")
}

func (tl *Timeline) formatEvent(e evaluator.Event) string {
	at := tl.stamp(e.Time)
	switch e.Type {
	case evaluator.EventLevel:
		return fmt.Sprintf("%s  level     %s/%s %s → %s  score %.1f  %s", at, e.Service, e.Route, e.From, e.To, deref(e.Score), strings.Join(e.Reasons, "; "))
	case evaluator.EventFailback:
		return fmt.Sprintf("%s  failback  %s/%s stage %d (%d%%)  score %.1f  %s", at, e.Service, e.Route, deref(e.Stage), deref(e.Percent), deref(e.Score), strings.Join(e.Reasons, "; "))
	case evaluator.EventTraffic:
		names := make([]string, 0, len(e.Weights))
		for n := range e.Weights {
			names = append(names, n)
		}
		sort.Strings(names)
		parts := make([]string, len(names))
		for i, n := range names {
			parts[i] = fmt.Sprintf("%s=%d", n, e.Weights[n])
		}
		extra := ""
		if deref(e.Degraded) {
			extra += "  DEGRADED"
		}
		if e.RetriesEnabled != nil && !*e.RetriesEnabled {
			extra += "  retries off"
		}
		if len(e.Reasons) > 0 {
			extra += "  " + strings.Join(e.Reasons, "; ") // a rate limit's step
		}
		return fmt.Sprintf("%s  traffic   %s %s%s", at, e.Service, strings.Join(parts, " "), extra)
	case evaluator.EventAlert:
		target := e.Service
		if e.Route != "" {
			target += "/" + e.Route
		}
		return fmt.Sprintf("%s  alert     %s %s [%s] %s  %s", at, target, e.Name, e.Tier, e.State, e.Annotations["summary"])
	}
	return fmt.Sprintf("%s  %s", at, e.Type)
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
