package main

import (
	"flag"
	"fmt"
	"math"
	"net/url"
	"strconv"
	"strings"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/web/api"
)

// signalValues is the repeatable --set SIGNAL=VALUE of `hermes ctl drill`.
type signalValues map[string]float64

func (s signalValues) String() string { return evaluator.DrillKind(s) }

func (s signalValues) Set(v string) error {
	name, val, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want SIGNAL=VALUE, e.g. quota_remaining=0.02, got %q", v)
	}
	f, err := strconv.ParseFloat(val, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return fmt.Errorf("%s: %q is not a finite number", name, val)
	}
	if _, dup := s[name]; dup {
		return fmt.Errorf("%s is set twice", name)
	}
	s[name] = f
	return nil
}

// drillFlags are the flags of `hermes ctl drill` besides --reason and --by.
type drillFlags struct {
	set    signalValues
	forDur *string
	dryRun *bool
	stop   *bool
}

func addDrillFlags(fs *flag.FlagSet) *drillFlags {
	d := &drillFlags{set: signalValues{}}
	fs.Var(d.set, "set", "SIGNAL=VALUE the route's signal reads during the drill (repeatable; required to start one)")
	d.forDur = fs.String("for", "", "how long the drill lasts, e.g. 10m (required to start one: a drill ends by itself)")
	d.dryRun = fs.Bool("dry-run", false, "levels, splits and alerts follow the drill; the actuators keep the split from before it")
	d.stop = fs.Bool("stop", false, "end the route's running drill now")
	return d
}

// check reports a usage error of the flags, before anything is sent.
func (d *drillFlags) check() error {
	if *d.stop {
		if len(d.set) > 0 || *d.forDur != "" || *d.dryRun {
			return fmt.Errorf("--stop takes no --set, --for or --dry-run")
		}
		return nil
	}
	if len(d.set) == 0 {
		return fmt.Errorf("--set SIGNAL=VALUE is required (or --stop)")
	}
	if *d.forDur == "" {
		return fmt.Errorf("--for is required: a drill ends by itself (e.g. --for 10m)")
	}
	return nil
}

// request is the admin API call the flags ask for: method, path and body.
func (d *drillFlags) request(route, reason, by string) (method, path string, body any) {
	if *d.stop {
		q := url.Values{"reason": {reason}, "by": {by}}
		return "DELETE", "/api/v1/admin/drills/" + url.PathEscape(route) + "?" + q.Encode(), nil
	}
	return "POST", "/api/v1/admin/drills", api.DrillRequest{Route: route, Signals: d.set, For: *d.forDur, Reason: reason, By: by, DryRun: *d.dryRun}
}
