package promapi

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/rules"
)

// Collector gathers a tick's answers into the Snapshot the core reads:
// the one way Hermes collects, live (the runner holds one across ticks),
// in backtests and in tests (a fresh one per tick is as good, only
// slower). Sources that answer a QueryFunc go through VectorRoutes.
//
// Between ticks it keeps each query's Answer, its route slots and the
// order its routes came in. At 10,000 routes a tick's answers are about
// 6 MB of slots, which a fresh Answer per query per tick would make
// garbage every tick; and Prometheus lists a query's series in the same
// order tick after tick while they stay the same, so the routeFinder's
// guesses, learned from the last tick, mostly hold from the first series
// of the next (a wrong one costs a comparison). An Answer is kept only
// while the routes, and its query's evidence and windows, stay the same;
// one whose query a tick no longer asks is dropped.
// TestCollectorAsFresh holds it to a fresh Collector per tick.
//
// The zero Collector is ready to use. It is not for concurrent use: a
// Collect returns only when every query of its tick has returned.
type Collector struct {
	// InMemory, when set, runs a tick's queries one after the other on
	// the calling goroutine, without the timeout: for a RouteQueryFunc
	// that answers from memory and never waits on the network (a
	// backtest's windows), where a goroutine and a timer per query and
	// tick cost more than most answers.
	InMemory bool

	positions *routePositions
	answers   map[string]*Answer // by query
	// errors counts the last snapshot's samples in the signals' own
	// columns that are evaluator.StatusError (Errors).
	errors int
}

// Errors is how many samples of the last Collect's snapshot, in the
// signals' own columns (not their windows'), are evaluator.StatusError:
// counted while the snapshot is built, so that a caller looking for the
// failed queries (the runner's signalProblems) reads the snapshot's
// 260,000 cells at 10,000 routes only when one failed.
func (c *Collector) Errors() int { return c.errors }

// Collect runs each signal's TickQuery once at t (its query and its
// volume or samples query in one expression, so a tick sends one query
// per signal), concurrently, each under its own timeout (none if timeout
// <= 0), and returns a Snapshot holding a Sample for every (route,
// signal) in routes × signals.
//
// A finite sample of a configured route is evaluator.StatusOK; NaN or
// ±Inf is evaluator.StatusMissing ("NaN", "Inf"); a route absent from the
// result is evaluator.StatusMissing ("no data"); several series for one
// route are evaluator.StatusError for that route; a failed query is
// evaluator.StatusError for every route, with ErrorReason as its reason.
// Series without a route label, or of routes not configured, are
// ignored. The evidence half of an answer (series marked
// rules.PartEvidence) is the count behind the value (see withVolume). A
// signal's windows fill the snapshot's further columns (rules.Columns:
// "soft_fail_ratio@15m"), each a value with the calls behind it; a window
// without data is a missing sample there, never the signal's own.
func (c *Collector) Collect(ctx context.Context, query RouteQueryFunc, signals []rules.SignalConfig, routes []string, t time.Time, timeout time.Duration) evaluator.Snapshot {
	if c.positions == nil || !slices.Equal(c.positions.names, routes) {
		// Positions are the routes' places in every slot; a kept
		// Answer's slots and guesses are of the old places.
		c.positions, c.answers = newRoutePositions(slices.Clone(routes)), nil
	}
	// Each distinct query runs once (two signals may be one query). The
	// evidence half exists for the signals that declare one; signals
	// sharing a TickQuery share their evidence query too.
	kept := c.answers
	c.answers = make(map[string]*Answer, len(signals))
	var queries []string
	var answers []*Answer
	of := make([]int, len(signals)) // of[i]: the query of signals[i]
	byQuery := map[string]int{}
	for i, sig := range signals {
		q := sig.TickQuery()
		if _, ok := byQuery[q]; !ok {
			byQuery[q] = len(queries)
			counted := sig.EvidenceQuery() != ""
			a := kept[q]
			if a != nil && a.fits(counted, sig.Windows) {
				a.reset()
			} else {
				a = newAnswer(c.positions, counted, sig.Windows)
			}
			c.answers[q] = a
			queries, answers = append(queries, q), append(answers, a)
		}
		of[i] = byQuery[q]
	}
	var wg sync.WaitGroup
	for i, q := range queries {
		if c.InMemory {
			if err := query(ctx, q, t, answers[i]); err != nil {
				answers[i].Fail(err)
			}
			continue
		}
		wg.Go(func() {
			qctx, cancel := ctx, context.CancelFunc(func() {})
			if timeout > 0 {
				qctx, cancel = context.WithTimeout(ctx, timeout)
			}
			defer cancel()
			if err := query(qctx, q, t, answers[i]); err != nil {
				answers[i].Fail(err)
			}
		})
	}
	wg.Wait()

	// The columns are the signals, then their windows (rules.Columns),
	// the order the core's policy reads them in.
	snap := evaluator.NewSnapshot(t, routes, rules.Columns(signals))
	c.errors = 0
	for j := range routes {
		col := len(signals)
		for i := range signals {
			a := answers[of[i]]
			smp := a.sample(j)
			if smp.Status == evaluator.StatusError {
				c.errors++
			}
			snap.SetCell(j, i, smp)
			for k := range signals[i].Windows {
				if k < len(a.windows) {
					snap.SetCell(j, col, a.windowSample(k, j))
				}
				col++
			}
		}
	}
	return snap
}
