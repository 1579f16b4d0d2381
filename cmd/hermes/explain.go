package main

import (
	"context"
	"flag"
	"fmt"
	"github.com/hermes-failover/hermes/web/api"
	"io"
	"math"
	"time"
)

func explainCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("explain", flag.ContinueOnError)
	fs.SetOutput(stderr)
	url := fs.String("url", "http://127.0.0.1:9797", "address of a running Hermes")
	route := fs.String("route", "", "route to explain (required)")
	service := fs.String("service", "", "only this service (default: every service holding the route)")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *route == "" {
		fmt.Fprintln(stderr, "explain: --route is required")
		return 2
	}
	c, err := newAPIClient(*url, "")
	if err != nil {
		fmt.Fprintf(stderr, "explain: %v\n", err)
		return 2
	}
	st, err := c.status(ctx)
	if err != nil {
		fmt.Fprintf(stderr, "explain: %v\n", err)
		return 1
	}
	found := false
	for _, svc := range st.Services {
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
		fmt.Fprintf(stderr, "explain: route %q is in no service of the running configuration\n", *route)
		return 1
	}
	return 0
}

func writeExplanation(w io.Writer, st api.Status, svc api.Service, rt api.Route) {
	fmt.Fprintf(w, "route %s of service %s: %s since %s, score %.1f, %d%% of traffic\n",
		rt.Name, svc.Name, rt.Level, rt.Since.UTC().Format(time.RFC3339), rt.Score, rt.Traffic)
	fmt.Fprintf(w, "last tick %s\n", st.LastTick.UTC().Format(time.RFC3339))
	switch {
	case rt.FailbackStage > 0:
		fmt.Fprintf(w, "failback in progress: stage %d (%d%%) since %s\n", rt.FailbackStage, rt.FailbackPercent, rt.StageSince.UTC().Format(time.RFC3339))
	case !rt.NextFailback.IsZero():
		fmt.Fprintf(w, "failback budget spent: the next failback may start after %s\n", rt.NextFailback.UTC().Format(time.RFC3339))
	}
	if rt.Level == "manual" {
		fmt.Fprintf(w, "manual: no automatic failback; release with: hermes ctl release %s --reason …\n", rt.Name)
	}
	if svc.Override != nil {
		fmt.Fprintf(w, "service override: %s %s (%s)\n", svc.Override.Kind, svc.Override.Route, svc.Override.Reason)
	}
	if len(rt.Missing) > 0 {
		fmt.Fprintf(w, "level held: no data for %v\n", rt.Missing)
	}
	fmt.Fprintln(w, "signals:")
	for _, c := range rt.Contributions {
		val := "—"
		if !math.IsNaN(c.Value) && c.StatusText == "ok" {
			val = fmt.Sprintf("%.4g", c.Value)
		}
		line := fmt.Sprintf("  %-18s %-10s %-8s", c.Signal, val, c.StatusText)
		if c.Idle {
			line += " idle (no user traffic)"
		}
		if c.Penalty > 0 {
			line += fmt.Sprintf(" -%.1f points", c.Penalty)
		}
		if c.CapsAt >= 0 {
			line += fmt.Sprintf(" caps score at %g", c.CapsAt)
		}
		if c.Reason != "" && (c.StatusText != "ok" || c.Counted) {
			line += " (" + c.Reason + ")"
		}
		fmt.Fprintln(w, line)
	}
	for _, a := range st.Alerts {
		if a.Route == rt.Name && a.Service == svc.Name {
			fmt.Fprintf(w, "alert %s [%s] %s since %s\n", a.Name, a.Tier, a.State, a.ActiveAt.UTC().Format(time.RFC3339))
		}
	}
}
