package main

import (
	"context"
	"flag"
	"fmt"
	"github.com/hermes-failover/hermes/web/api"
	"io"
	"net/http"
	"net/url"
	"time"
)

const ctlUsage = `usage: hermes ctl [--url URL] [--token-file FILE] <action> …

actions:
  release ROUTE   --reason TEXT [--by NAME]                 hand a manual route back to automation
  pin SERVICE ROUTE --reason TEXT [--for 1h] [--by NAME]    send all of SERVICE's traffic to ROUTE
  pause SERVICE   --reason TEXT [--for 1h] [--by NAME]      freeze SERVICE's traffic split
  clear SERVICE   --reason TEXT [--by NAME]                 remove SERVICE's pin or pause
  status                                                    print every service's split and routes
`

func ctlCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("ctl", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, ctlUsage) }
	base := fs.String("url", "http://127.0.0.1:9797", "address of a running Hermes")
	tokenFile := fs.String("token-file", "", "file holding the admin bearer token")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() == 0 {
		fs.Usage()
		return 2
	}
	c, err := newAPIClient(*base, *tokenFile)
	if err != nil {
		fmt.Fprintf(stderr, "ctl: %v\n", err)
		return 2
	}
	action, rest := fs.Arg(0), fs.Args()[1:]
	af := flag.NewFlagSet("ctl "+action, flag.ContinueOnError)
	af.SetOutput(stderr)
	reason := af.String("reason", "", "why (required; kept in the audit log)")
	by := af.String("by", "", "who")
	forDur := af.String("for", "", "expire after this duration (pin, pause)")
	pos, err := parseInterleaved(af, rest)
	if err != nil {
		return 2
	}
	need := map[string]int{"release": 1, "pin": 2, "pause": 1, "clear": 1, "status": 0}
	n, ok := need[action]
	if !ok {
		fmt.Fprintf(stderr, "ctl: unknown action %q\n\n%s", action, ctlUsage)
		return 2
	}
	if len(pos) != n {
		fmt.Fprintf(stderr, "ctl %s: want %d argument(s), got %d\n\n%s", action, n, len(pos), ctlUsage)
		return 2
	}
	if action != "status" && *reason == "" {
		fmt.Fprintf(stderr, "ctl %s: --reason is required\n", action)
		return 2
	}
	// answer is what the admin API says of a command: applied at a tick,
	// or queued for one.
	var answer struct {
		Status    string    `json:"status"`
		Tick      time.Time `json:"tick"`
		AppliesAt time.Time `json:"applies_at"`
	}
	switch action {
	case "release":
		err = c.do(ctx, http.MethodPost, "/api/v1/admin/release", api.ReleaseRequest{Route: pos[0], Reason: *reason, By: *by}, &answer)
	case "pin":
		err = c.do(ctx, http.MethodPost, "/api/v1/admin/overrides", api.OverrideRequest{Service: pos[0], Kind: "pin", Route: pos[1], Reason: *reason, By: *by, ExpiresIn: *forDur}, &answer)
	case "pause":
		err = c.do(ctx, http.MethodPost, "/api/v1/admin/overrides", api.OverrideRequest{Service: pos[0], Kind: "pause", Reason: *reason, By: *by, ExpiresIn: *forDur}, &answer)
	case "clear":
		q := url.Values{"reason": {*reason}, "by": {*by}}
		err = c.do(ctx, http.MethodDelete, "/api/v1/admin/overrides/"+url.PathEscape(pos[0])+"?"+q.Encode(), nil, &answer)
	case "status":
		st, serr := c.status(ctx)
		if serr != nil {
			err = serr
			break
		}
		for _, svc := range st.Services {
			fmt.Fprintf(stdout, "%s: %v", svc.Name, svc.Weights)
			if svc.Override != nil {
				fmt.Fprintf(stdout, "  override %s %s (%s)", svc.Override.Kind, svc.Override.Route, svc.Override.Reason)
			}
			fmt.Fprintln(stdout)
			for _, rt := range svc.Routes {
				fmt.Fprintf(stdout, "  %-16s %-9s score %5.1f  %3d%%\n", rt.Name, rt.Level, rt.Score, rt.Traffic)
			}
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "ctl %s: %v\n", action, err)
		return 1
	}
	switch {
	case action == "status":
	case answer.Status == "queued":
		fmt.Fprintf(stdout, "%s: queued; applies at the tick of %s\n", action, answer.AppliesAt.UTC().Format(time.RFC3339))
	default:
		fmt.Fprintf(stdout, "%s: done at the tick of %s\n", action, answer.Tick.UTC().Format(time.RFC3339))
	}
	return 0
}

// parseInterleaved parses flags that may come after positional arguments.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}
