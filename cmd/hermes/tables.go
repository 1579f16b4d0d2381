package main

import (
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/web/api"
)

// notReady is an error when Hermes is not ready (the runner decides, see
// runner.Runner.Ready): no tick evaluated yet, or the last tick had no data from
// Prometheus. Its levels and scores are placeholders then, not
// measurements.
func notReady(st api.Status) error {
	if st.Ready && !st.LastTick.IsZero() {
		return nil
	}
	loaded := ""
	if !st.LoadedAt.IsZero() {
		loaded = " (configuration loaded at " + st.LoadedAt.UTC().Format(time.RFC3339) + ")"
	}
	if !st.Ticked && st.LastTick.IsZero() {
		return errors.New("Hermes is not ready yet: no tick evaluated since it started" + loaded + "; try again after one evaluation interval " + st.Interval)
	}
	cause := "every signal query failed"
	if len(st.Problems) > 0 {
		cause = strings.Join(st.Problems, "; ")
	}
	return errors.New("Hermes is not ready yet: restored, but the last tick had no data from Prometheus: " + cause +
		"; nothing is written to the backends but pins and pauses" + loaded + "; it is ready at the first tick with data (every " + st.Interval + ")")
}

// scoreText is a route's score as ctl and explain print it: the number
// when the last tick judged it, marked when it is carried, and no number
// when it was never judged (see api.ScoreJudged).
func scoreText(rt api.Route) string {
	switch rt.ScoreState {
	case api.ScoreNotJudged:
		return "not judged"
	case api.ScoreCarried:
		return fmt.Sprintf("%.1f carried", rt.Score)
	}
	return fmt.Sprintf("%.1f", rt.Score)
}

// newTable returns a tab-separated table writer for w; Flush prints it.
func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 0, 2, ' ', 0) }

// writeStatus prints every service of st as a table of its routes. Every
// string from the server goes through cell: a newline in a name must not
// start a line of its own.
func writeStatus(w io.Writer, st api.Status) {
	fmt.Fprintf(w, "last tick %s, every %s\n", st.LastTick.UTC().Format(time.RFC3339), cell(st.Interval))
	if f := st.ReloadFailure; f != nil {
		fmt.Fprintf(w, "reload rejected at %s (%d since %s): %s; the configuration loaded at %s keeps running\n",
			f.At.UTC().Format(time.RFC3339), f.Count, f.Since.UTC().Format(time.RFC3339), cell(f.Error), st.LoadedAt.UTC().Format(time.RFC3339))
	}
	for _, p := range st.Problems {
		fmt.Fprintln(w, cell(p))
	}
	for _, svc := range st.Services {
		fmt.Fprintf(w, "\nservice %s", cell(svc.Name))
		if svc.Degraded {
			fmt.Fprint(w, " (degraded)")
		}
		if o := svc.Override; o != nil {
			fmt.Fprintf(w, ": %s %s by %s (%s)", o.Kind, cell(o.Route), cell(dash(o.By)), cell(o.Reason))
			if !o.Expires.IsZero() {
				fmt.Fprintf(w, ", expires %s (in %s)", o.Expires.UTC().Format(time.RFC3339), o.Expires.Sub(st.LastTick).Round(time.Second))
			}
		}
		fmt.Fprintln(w)
		// A held service says why; a split Hermes does not know is not
		// shown as one (its weights are empty, no route's traffic 0 %).
		switch {
		case svc.SplitUnknown && svc.Held != nil:
			fmt.Fprintf(w, "split unknown (held: %s)\n", cell(svc.Held.Why))
		case svc.SplitUnknown:
			fmt.Fprintln(w, "split unknown (held)")
		case svc.Held != nil:
			fmt.Fprintf(w, "held: %s\n", cell(svc.Held.Why))
		}
		tw := newTable(w)
		fmt.Fprintln(tw, "ROUTE\tLEVEL\tSINCE\tSCORE\tTRAFFIC\tREASONS")
		for _, rt := range svc.Routes {
			level := rt.Level
			if rt.FailbackStage > 0 {
				level += fmt.Sprintf(" (failback %d: %d%%)", rt.FailbackStage, rt.FailbackPercent)
			}
			var why []string
			for _, w := range rt.WaitsFor {
				why = append(why, "waits for "+w)
			}
			why = append(append(why, rt.State...), rt.Reasons...)
			traffic := fmt.Sprintf("%d%%", rt.Traffic)
			if svc.SplitUnknown {
				traffic = "unknown"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", cell(rt.Name), cell(level), since(rt.Since, st.LastTick), scoreText(rt), traffic, dash(strings.Join(cells(why), "; ")))
		}
		tw.Flush()
	}
	if len(st.Drills) > 0 {
		fmt.Fprintln(w, "\ndrills")
		tw := newTable(w)
		fmt.Fprintln(tw, "ROUTE\tKIND\tSINCE\tUNTIL\tDRY RUN\tBY\tREASON")
		for _, d := range st.Drills {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%v\t%s\t%s\n", cell(d.Route), cell(evaluator.DrillKind(d.Signals)), since(d.Since, st.LastTick),
				d.Until.UTC().Format(time.RFC3339), d.DryRun, cell(dash(d.By)), cell(d.Reason))
		}
		tw.Flush()
	}
	if len(st.Alerts) > 0 {
		fmt.Fprintln(w, "\nalerts")
		tw := newTable(w)
		fmt.Fprintln(tw, "ALERT\tTIER\tSTATE\tSERVICE\tROUTE\tSINCE")
		for _, a := range st.Alerts {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", cell(a.Name), cell(a.Tier), cell(a.State), cell(dash(a.Service)), cell(dash(a.Route+a.Actuator)), since(a.ActiveAt, st.LastTick))
		}
		tw.Flush()
	}
}

// since prints t and how long before now it was.
func since(t, now time.Time) string {
	if t.IsZero() {
		return "-"
	}
	return fmt.Sprintf("%s (%s ago)", t.UTC().Format(time.RFC3339), now.Sub(t).Round(time.Second))
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
