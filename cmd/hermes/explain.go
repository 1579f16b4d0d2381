package main

import (
	"context"
	"fmt"
	"github.com/hermes-failover/hermes/web/api"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/traffic"
)

var explainUsage = usage{name: "explain", synopsis: "--route ROUTE [--service SERVICE] [--url URL]",
	summary: "say why a route is where it is: signals, floors, caps, dwell and hold (asks a running Hermes)"}

func explainCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	stdout, stderr = terminalSafe(stdout), terminalSafe(stderr)
	fs := explainUsage.newFlags()
	target := newCtlTarget()
	fs.StringVar(&target.url, "url", target.url, "address of a running Hermes ($"+envURL+")")
	route := fs.String("route", "", "route to explain (required)")
	service := fs.String("service", "", "only this service (default: every service holding the route)")
	if _, code, ok := explainUsage.parse(fs, args, 0, 0, stdout, stderr); !ok {
		return code
	}
	if *route == "" {
		return explainUsage.fail(stderr, fs, "--route is required")
	}
	c, err := newAPIClient(target.url, "")
	if err != nil {
		fmt.Fprintf(stderr, "hermes explain: %v\n", err)
		return 2
	}
	st, err := c.status(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "hermes explain: %v\n", err)
		return 1
	}
	found := false
	var known []string
	for _, svc := range st.Services {
		for _, rt := range svc.Routes {
			if !slices.Contains(known, rt.Name) {
				known = append(known, rt.Name)
			}
		}
		if *service != "" && svc.Name != *service {
			continue
		}
		for _, rt := range svc.Routes {
			if rt.Name != *route {
				continue
			}
			found = true
			writeExplanation(stdout, st, svc, rt)
		}
	}
	if !found {
		where := "no service of the running configuration"
		if *service != "" {
			where = fmt.Sprintf("service %q", *service)
		}
		fmt.Fprintf(stderr, "hermes explain: route %q is in %s; the routes are %s\n", *route, where, quoteList(known))
		return 1
	}
	return 0
}

// quoteList is names quoted and joined with commas, for an error that
// lists the valid choices.
func quoteList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = strconv.Quote(n)
	}
	return strings.Join(q, ", ")
}

func writeExplanation(w io.Writer, st api.Status, svc api.Service, rt api.Route) {
	fmt.Fprintf(w, "route %s of service %s: %s since %s, score %s, %d%% of traffic\n",
		rt.Name, svc.Name, rt.Level, rt.Since.UTC().Format(time.RFC3339), scoreText(rt), rt.Traffic)
	if rt.Moved != "" {
		// The cause, fixed at the move (evaluator.Move): the score above
		// is the tick's, which on a failed-over route shows its probes.
		fmt.Fprintf(w, "moved to %s\n", rt.Moved)
	}
	fmt.Fprintf(w, "last tick %s\n", st.LastTick.UTC().Format(time.RFC3339))
	for _, p := range st.Problems {
		fmt.Fprintln(w, p)
	}
	for _, s := range rt.State {
		fmt.Fprintln(w, s)
	}
	switch {
	case rt.FailbackStage > 0:
		fmt.Fprintf(w, "failback in progress: stage %d (%d%%) since %s\n", rt.FailbackStage, rt.FailbackPercent, rt.StageSince.UTC().Format(time.RFC3339))
	case !rt.NextFailback.IsZero():
		fmt.Fprintf(w, "failback budget spent: the next failback may start after %s\n", rt.NextFailback.UTC().Format(time.RFC3339))
	}
	if rt.Level == traffic.Manual.String() {
		fmt.Fprintf(w, "manual: no automatic failback; release with: hermes ctl release %s --reason …\n", rt.Name)
	}
	if svc.Override != nil {
		o := svc.Override
		until := "no expiry"
		if !o.Expires.IsZero() {
			until = "expires " + o.Expires.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "service override: %s %s (%s), %s\n", o.Kind, o.Route, o.Reason, until)
	}
	if len(rt.Missing) > 0 {
		fmt.Fprintf(w, "level held: no data for %v\n", rt.Missing)
	}
	if len(rt.Placement) > 0 {
		fmt.Fprintln(w, "placed by:")
		for _, p := range rt.Placement {
			fmt.Fprintf(w, "  %s\n", p)
		}
	}
	fmt.Fprintln(w, "signals:")
	tw := newTable(w)
	fmt.Fprintln(tw, "  SIGNAL\tVALUE\tSTATUS\tEFFECT")
	for _, c := range rt.Contributions {
		val := "-"
		if c.Value != nil && c.Status == statusOK {
			val = fmt.Sprintf("%.4g", *c.Value)
		}
		var effect []string
		if c.Idle {
			effect = append(effect, "idle (no user traffic)")
		}
		if c.Penalty > 0 {
			effect = append(effect, fmt.Sprintf("-%.1f points", c.Penalty))
		}
		if c.CapsAt >= 0 {
			effect = append(effect, fmt.Sprintf("caps score at %g", c.CapsAt))
		}
		if c.Floor > traffic.Normal {
			effect = append(effect, "floor "+c.Floor.String())
		}
		if r := c.Reason; r != "" && (c.Status != statusOK || c.Counted) {
			effect = append(effect, "("+r+")")
		}
		fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", c.Signal, val, signalStatus(c, rt.Missing), dash(strings.Join(effect, ", ")))
	}
	tw.Flush()
	for _, a := range st.Alerts {
		if a.Route == rt.Name && a.Service == svc.Name {
			fmt.Fprintf(w, "alert %s [%s] %s since %s\n", a.Name, a.Tier, a.State, a.ActiveAt.UTC().Format(time.RFC3339))
		}
	}
	writeCandidate(w, st.Candidate, svc.Name, rt.Name)
}

// statusOK is evaluator.StatusOK as api.Contribution.Status writes it.
var statusOK = evaluator.StatusOK.String()

// signalStatus is the STATUS of contribution c among a route's missing
// signals (api.Route.Missing, those that hold its level): a signal
// without data is "missing" only when it holds the level. One that needs
// user traffic on a route that gets none is "idle", and an optional one
// (missing: ignore) "optional, not exported" (or "optional, failing" when
// its query failed): neither holds anything (issue 34: explain called
// them all missing).
func signalStatus(c api.Contribution, missing []string) string {
	switch {
	case c.Status == statusOK:
		return c.Status
	case c.Idle:
		return "idle"
	case slices.Contains(missing, c.Signal):
		return c.Status
	case c.Status == evaluator.StatusError.String():
		return "optional, failing"
	}
	return "optional, not exported"
}
