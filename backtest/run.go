package backtest

import (
	"context"
	"fmt"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/promapi"
)

// Release is a person's release of a route from manual at a given time,
// replayed as if it had been sent through the admin API.
type Release struct {
	Route  string
	At     time.Time
	Reason string
}

// Options tune a backtest.
type Options struct {
	// Releases are applied before the first tick at or after their time.
	Releases []Release
	// OnTick, when set, sees every tick's snapshot and resulting state.
	OnTick func(t time.Time, snap evaluator.Snapshot, s evaluator.State)
	// Ticks keeps every tick's scores, levels and splits in Timeline.Ticks.
	Ticks bool
	// Inject overlays faults on what the signals return (a drill replayed
	// over real history).
	Inject []evaluator.Overlay
}

// Timeline is what a backtest decided.
type Timeline struct {
	Start  time.Time
	End    time.Time
	Step   time.Duration
	Events []evaluator.Event
	// Ticks are every tick's scores, levels and splits, with Options.Ticks.
	Ticks []evaluator.Tick
	Final evaluator.State
}

// Run feeds the core one tick per evaluation interval from from to to (both
// aligned up to a multiple of the interval), querying signals with query,
// exactly as the live loop does.
func Run(ctx context.Context, pol *evaluator.Policy, query promapi.QueryFunc, from, to time.Time, opts Options) (*Timeline, error) {
	return run(ctx, pol, promapi.VectorRoutes(query), false, from, to, opts)
}

// run is Run over a promapi.RouteQueryFunc; inMemory when ticks answers
// from memory (promapi.Collector.InMemory).
func run(ctx context.Context, pol *evaluator.Policy, ticks promapi.RouteQueryFunc, inMemory bool, from, to time.Time, opts Options) (*Timeline, error) {
	step := pol.Config.Global.EvaluationInterval
	if step <= 0 {
		return nil, fmt.Errorf("evaluation_interval must be positive")
	}
	start := alignUp(from, step)
	if err := checkTicks(start, to, step); err != nil {
		return nil, err
	}
	tl := &Timeline{Start: start, End: to, Step: step}
	var st evaluator.State
	snaps, stop := collectAhead(ctx, pol, ticks, inMemory, start, to, step)
	defer stop()
	releases := append([]Release(nil), opts.Releases...)
	for t := start; !t.After(to); t = t.Add(step) {
		if err := ctx.Err(); err != nil {
			return tl, err
		}
		var snap evaluator.Snapshot
		select {
		case snap = <-snaps:
		case <-ctx.Done():
			return tl, ctx.Err()
		}
		var cmds []evaluator.Command
		for i := 0; i < len(releases); {
			r := releases[i]
			if r.At.After(t) {
				i++
				continue
			}
			cmd := evaluator.Command{Kind: evaluator.CommandRelease, Route: r.Route, Reason: r.Reason}
			if err := evaluator.Check(pol, st, cmd); err != nil {
				return tl, fmt.Errorf("release at %s: %w", t.UTC().Format(time.RFC3339), err)
			}
			cmds = append(cmds, cmd)
			releases = append(releases[:i], releases[i+1:]...)
		}
		for _, o := range opts.Inject {
			o.Apply(&snap)
		}
		next, evs := evaluator.Step(pol, st, evaluator.Input{Snapshot: snap, Commands: cmds}, t)
		st = next
		for i := range evs {
			if evs[i].Env != nil { // an alert event: its text as Alertmanager would get it
				evs[i].Annotations, evs[i].Env = pol.EventText(&evs[i]), nil
			}
		}
		tl.Events = append(tl.Events, evs...)
		if opts.Ticks {
			tl.Ticks = append(tl.Ticks, evaluator.TickOf(t, st))
		}
		if opts.OnTick != nil {
			opts.OnTick(t, snap, st)
		}
	}
	tl.Final = st
	return tl, nil
}

// snapshotsAhead is how many ticks' snapshots collectAhead may hold
// before the core has stepped through them.
const snapshotsAhead = 8

// collectAhead collects the snapshots of the ticks from start to to, in
// order, into the channel it returns, ahead of the core stepping through
// them: a snapshot depends on the tick's time only, never on the state,
// so the collection (a tenth of a 100-route backtest's CPU) runs on the
// other core while the core steps, instead of between two steps. stop
// ends the collection and waits for it.
func collectAhead(ctx context.Context, pol *evaluator.Policy, ticks promapi.RouteQueryFunc, inMemory bool, start, to time.Time, step time.Duration) (snaps <-chan evaluator.Snapshot, stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	out := make(chan evaluator.Snapshot, snapshotsAhead)
	done := make(chan struct{})
	go func() {
		defer close(done)
		// One Collector for the run, as the live loop keeps one: it
		// reuses each query's route slots from tick to tick, and the
		// snapshots it returns share none of them.
		collector := promapi.Collector{InMemory: inMemory}
		for t := start; !t.After(to); t = t.Add(step) {
			snap := collector.Collect(ctx, ticks, pol.Config.Signals, pol.Routes(), t, pol.Config.Global.QueryTimeout)
			select {
			case out <- snap:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, func() { cancel(); <-done }
}

// alignUp returns the first multiple of step (since the Unix epoch) at or after t.
func alignUp(t time.Time, step time.Duration) time.Time {
	a := t.Truncate(step)
	if a.Before(t) {
		a = a.Add(step)
	}
	return a.UTC()
}
