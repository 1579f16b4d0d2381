package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/web/api"
)

var ctlUsage = usage{name: "ctl", synopsis: "<action> [arguments] [--url URL] [--token-file FILE] [flags]",
	summary: "operator controls of a running Hermes: status, release, pin, pause, clear, drill, drills"}

// ctlAction is one "hermes ctl" action.
type ctlAction struct {
	usage
	args int // positional arguments
	// reason says the action changes something: --reason is required.
	reason bool
	// expires says --for applies.
	expires bool
}

var ctlActions = []ctlAction{
	{usage{name: "ctl status", synopsis: "", summary: "print every service's split and its routes' levels and scores"}, 0, false, false},
	{usage{name: "ctl release", synopsis: "ROUTE --reason TEXT [--by NAME]", summary: "hand a manual route back to automation"}, 1, true, false},
	{usage{name: "ctl pin", synopsis: "SERVICE ROUTE --reason TEXT [--for 1h] [--replace] [--by NAME]", summary: "send all of SERVICE's traffic to ROUTE (--replace to replace its pause)"}, 2, true, true},
	{usage{name: "ctl pause", synopsis: "SERVICE --reason TEXT [--for 1h] [--replace] [--by NAME]", summary: "freeze SERVICE's traffic split (--replace to replace its pin)"}, 1, true, true},
	{usage{name: "ctl clear", synopsis: "SERVICE --reason TEXT [--by NAME]", summary: "remove SERVICE's pin or pause"}, 1, true, false},
	{usage{name: "ctl drill", synopsis: "ROUTE --set SIGNAL=VALUE [--set …] --for 10m --reason TEXT [--dry-run] [--by NAME] | ROUTE --stop --reason TEXT",
		summary: "run a fault drill: ROUTE's signals read VALUE until --for has passed (or --stop)"}, 1, true, false},
	{usage{name: "ctl drills", synopsis: "--audit.file FILE", summary: "list past drills from the audit log, with their delays and the median per kind"}, 0, false, false},
}

func ctlDetails() string {
	s := "actions:\n"
	for _, a := range ctlActions {
		s += fmt.Sprintf("  %-8s %s\n", a.name[len("ctl "):], a.summary)
	}
	return s + "\nFlags may come before or after the action. HERMES_URL and HERMES_TOKEN_FILE\n" +
		"set --url and --token-file when they are not given.\n" +
		"Run \"hermes ctl <action> --help\" for an action's arguments.\n"
}

// ctlTarget are the flags that say which Hermes to talk to: --url and
// --token-file, defaulting to $HERMES_URL and $HERMES_TOKEN_FILE. They are
// defined on ctl's flag set and on every action's, so that they may come
// before or after the action.
type ctlTarget struct{ url, tokenFile string }

// Environment variables that set ctl's --url and --token-file.
const (
	envURL       = "HERMES_URL"
	envTokenFile = "HERMES_TOKEN_FILE"
)

func newCtlTarget() *ctlTarget {
	t := &ctlTarget{url: "http://127.0.0.1:9797"}
	if v := os.Getenv(envURL); v != "" {
		t.url = v
	}
	t.tokenFile = os.Getenv(envTokenFile)
	return t
}

func (t *ctlTarget) define(fs *flag.FlagSet) {
	fs.StringVar(&t.url, "url", t.url, "address of a running Hermes ($"+envURL+")")
	fs.StringVar(&t.tokenFile, "token-file", t.tokenFile, "`file` holding the admin bearer token ($"+envTokenFile+")")
}

func ctlCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	stdout, stderr = terminalSafe(stdout), terminalSafe(stderr)
	u := ctlUsage
	u.details = ctlDetails()
	fs := u.newFlags()
	target := newCtlTarget()
	target.define(fs)
	// The action's own flags come after it: parse up to the first argument.
	if err := fs.Parse(args); err != nil {
		return u.flagError(err, fs, stdout, stderr)
	}
	if fs.NArg() == 0 {
		return u.fail(stderr, fs, "an action is required")
	}
	name, rest := fs.Arg(0), fs.Args()[1:]
	var act *ctlAction
	for i := range ctlActions {
		if ctlActions[i].name == "ctl "+name {
			act = &ctlActions[i]
		}
	}
	if act == nil {
		var names []string
		for _, a := range ctlActions {
			names = append(names, strings.TrimPrefix(a.name, "ctl "))
		}
		return u.fail(stderr, fs, "unknown action %q; the actions are %s", name, strings.Join(names, ", "))
	}
	af := act.newFlags()
	if name != "drills" {
		target.define(af)
	}
	var reason, by, forDur *string
	if act.reason {
		reason = af.String("reason", "", "why (required; kept in the audit log)")
		by = af.String("by", "", "who")
	}
	if act.expires {
		forDur = af.String("for", "", "expire after this duration, e.g. 30m (default: no expiry)")
	}
	var drill *drillFlags
	var auditFile *string
	replace := new(bool)
	switch name {
	case "pause":
		replace = af.Bool("replace", false, "replace the service's pin (and its expiry) if it has one; without it a pause over a pin is refused")
	case "pin":
		replace = af.Bool("replace", false, "replace the service's pause (and its expiry) if it has one; without it a pin over a pause is refused")
	case "drill":
		drill = addDrillFlags(af)
	case "drills":
		auditFile = af.String("audit.file", "", `the audit log "hermes run --audit.file" writes, or "-" for standard input (required)`)
	}
	pos, code, ok := act.parse(af, rest, act.args, act.args, stdout, stderr)
	if !ok {
		return code
	}
	if act.reason && *reason == "" {
		return act.fail(stderr, af, "--reason is required")
	}
	if drill != nil {
		if err := drill.check(); err != nil {
			return act.fail(stderr, af, "%v", err)
		}
	}
	if auditFile != nil {
		if *auditFile == "" {
			return act.fail(stderr, af, "--audit.file is required")
		}
		if err := drillsReport(*auditFile, os.Stdin, stdout); err != nil {
			fmt.Fprintf(stderr, "hermes ctl drills: %v\n", err)
			return 1
		}
		return 0
	}
	c, err := newAPIClient(target.url, target.tokenFile)
	if err != nil {
		fmt.Fprintf(stderr, "hermes ctl: %v\n", err)
		return 2
	}
	var reply api.CommandReply
	switch name {
	case "status":
		st, err := c.status(ctx)
		if err != nil {
			fmt.Fprintf(stderr, "hermes ctl status: %v\n", err)
			return 1
		}
		writeStatus(stdout, st)
		return 0
	case "release":
		reply, err = c.command(ctx, http.MethodPost, "/api/v1/admin/release", api.ReleaseRequest{Route: pos[0], Reason: *reason, By: *by})
	case "pin":
		reply, err = c.command(ctx, http.MethodPost, "/api/v1/admin/overrides", api.OverrideRequest{Service: pos[0], Kind: "pin", Route: pos[1], Reason: *reason, By: *by, ExpiresIn: *forDur, Replace: *replace})
	case "pause":
		reply, err = c.command(ctx, http.MethodPost, "/api/v1/admin/overrides", api.OverrideRequest{Service: pos[0], Kind: "pause", Reason: *reason, By: *by, ExpiresIn: *forDur, Replace: *replace})
	case "clear":
		q := url.Values{"reason": {*reason}, "by": {*by}}
		reply, err = c.command(ctx, http.MethodDelete, "/api/v1/admin/overrides/"+url.PathEscape(pos[0])+"?"+q.Encode(), nil)
	case "drill":
		method, path, body := drill.request(pos[0], *reason, *by)
		reply, err = c.command(ctx, method, path, body)
	}
	if err != nil {
		fmt.Fprintf(stderr, "hermes ctl %s: %v\n", name, err)
		return 1
	}
	if reply.Outcome == api.OutcomeQueued {
		fmt.Fprintf(stdout, "%s: queued; applies at the tick of %s%s\n", name, reply.Tick.UTC().Format(time.RFC3339), expiryText(forDur))
	} else {
		fmt.Fprintf(stdout, "%s: done at the tick of %s%s\n", name, reply.Tick.UTC().Format(time.RFC3339), overrideExpiry(reply.Override, reply.Service))
		// What the command leaves undone: a split Hermes does not know
		// (api.CommandReply.Note).
		if reply.Note != "" {
			fmt.Fprintf(stdout, "%s: %s\n", name, cell(reply.Note))
		}
	}
	return 0
}

// overrideExpiry says when the pin or pause o set lapses: "; expires …"
// or "; no expiry (hermes ctl clear to end it)"; nothing for other
// commands.
func overrideExpiry(o *evaluator.Override, service string) string {
	switch {
	case o == nil:
		return ""
	case o.Expires.IsZero():
		return "; no expiry: it holds until hermes ctl clear " + cell(service)
	}
	return "; expires " + o.Expires.UTC().Format(time.RFC3339)
}

// expiryText says the expiry a queued pin or pause asked for (--for d,
// nil for other actions).
func expiryText(d *string) string {
	if d == nil || *d == "" {
		return ""
	}
	return "; expires " + *d + " after it applies"
}
