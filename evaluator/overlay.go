package evaluator

import (
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/hermes-failover/hermes/rules"
)

// Overlay is an injected fault: from From (until Until, when set) the
// signal of one route reads Value whatever its source says. Drills apply
// it to a snapshot before scoring, so the rest of the tick — levels,
// splits, alerts — runs as for a real fault.
type Overlay struct {
	Route  string
	Signal string
	Value  float64
	From   time.Time
	// Until is zero for no end.
	Until time.Time
}

// Apply overlays snap when its time lies in the overlay's window. It
// gives snap its own copy of the samples, never writing into a table snap
// shares.
func (o Overlay) Apply(snap *Snapshot) {
	if snap.Time.Before(o.From) || (!o.Until.IsZero() && !snap.Time.Before(o.Until)) {
		return
	}
	c := snap.Clone()
	o.set(&c)
	*snap = c
}

// set writes the overlay's sample into snap's table.
func (o Overlay) set(snap *Snapshot) {
	snap.Set(o.Route, o.Signal, Sample{Value: o.Value, Status: StatusOK, Reason: "injected"})
}

// ParseOverlay reads ROUTE:SIGNAL=VALUE@OFFSET[+DURATION] (for example
// free:error_body_ratio=0.4@10m, or free:quota_remaining=0.02@1h+30m),
// the offset counted from start. p checks that the route and signal exist.
func ParseOverlay(p *Policy, s string, start time.Time) (Overlay, error) {
	bad := func(why string) (Overlay, error) {
		return Overlay{}, errors.New(strconv.Quote(s) + ": " + why + " (want ROUTE:SIGNAL=VALUE@OFFSET[+DURATION], e.g. free:error_body_ratio=0.4@10m)")
	}
	target, when, ok := strings.Cut(s, "@")
	if !ok {
		return bad("no @OFFSET")
	}
	rs, val, ok := strings.Cut(target, "=")
	route, signal, ok2 := strings.Cut(rs, ":")
	if !ok || !ok2 || route == "" || signal == "" {
		return bad("no ROUTE:SIGNAL=VALUE")
	}
	v, err := strconv.ParseFloat(val, 64)
	if err != nil {
		return bad("value " + strconv.Quote(val) + " is not a number")
	}
	offS, durS, hasDur := strings.Cut(when, "+")
	off, err := rules.ParseDuration(offS)
	if err != nil {
		return bad("offset: " + err.Error())
	}
	o := Overlay{Route: route, Signal: signal, Value: v, From: start.Add(off)}
	if hasDur {
		d, err := rules.ParseDuration(durS)
		if err != nil || d == 0 {
			return bad("duration " + strconv.Quote(durS) + " is not a positive duration")
		}
		o.Until = o.From.Add(d)
	}
	if _, ok := p.signals[signal]; !ok {
		return bad("unknown signal " + strconv.Quote(signal))
	}
	for _, r := range p.Routes() {
		if r == route {
			return o, nil
		}
	}
	return bad("unknown route " + strconv.Quote(route))
}
