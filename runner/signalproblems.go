package runner

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/promapi"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/runner/condlog"
)

// SignalProblem is one signal whose query failed at the last tick, for
// some or all of its routes.
type SignalProblem struct {
	Signal string
	// Reason is the sample's reason (promapi.ErrorReason: "timeout",
	// "connection", "bad_data", …), the label of hermes_query_errors_total.
	Reason string
	// Detail says it in words when the whole query failed
	// (promapi.ErrorDetail: "connection refused"); empty otherwise.
	Detail string
	// Routes is how many routes it failed for, Route the first of them
	// in name order.
	Routes int
	Route  string
}

// signalProblems are the failed signal queries of snap, once per signal
// of signals and reason, by signal then reason, with the detail of each
// failed query from failed (by signal name). A signal's longer windows
// travel in its query (rules.WindowColumn): they fail with it and are not
// problems of their own.
func signalProblems(snap evaluator.Snapshot, signals []rules.SignalConfig, failed map[string]error) []SignalProblem {
	type key struct{ signal, reason string }
	names := make(map[string]bool, len(signals))
	for _, s := range signals {
		names[s.Name] = true
	}
	byKey := map[key]*SignalProblem{}
	for cell, smp := range snap.All() {
		if smp.Status != evaluator.StatusError || !names[cell[1]] {
			continue
		}
		route, sig := cell[0], cell[1]
		k := key{sig, smp.Reason}
		p := byKey[k]
		if p == nil {
			p = &SignalProblem{Signal: sig, Reason: smp.Reason, Route: route}
			if err := failed[sig]; err != nil && promapi.ErrorReason(err) == smp.Reason {
				p.Detail = promapi.ErrorDetail(err)
			}
			byKey[k] = p
		}
		p.Routes++
		p.Route = min(p.Route, route)
	}
	out := make([]SignalProblem, 0, len(byKey))
	for _, p := range byKey {
		out = append(out, *p)
	}
	slices.SortFunc(out, func(a, b SignalProblem) int {
		return cmp.Or(cmp.Compare(a.Signal, b.Signal), cmp.Compare(a.Reason, b.Reason))
	})
	return out
}

// signalConditions are the tick's failed signal queries as conditions of
// the fleet, one per reason (condlog.Log, by reason): how many signals
// fail for it and the first few, the most routes one of them failed for
// and an example route, and the first detail in words. A query fails for
// every route it covers, and Prometheus down fails every signal: one
// line per signal and route would be 10,000 lines per signal and tick in
// a large fleet; one per signal, a dozen at every tick.
func signalConditions(problems []SignalProblem) map[string]condlog.Line {
	type group struct {
		signals       []string
		routes        int
		route, detail string
	}
	by := map[string]*group{}
	for _, p := range problems { // by signal, then reason
		g := by[p.Reason]
		if g == nil {
			g = &group{route: p.Route}
			by[p.Reason] = g
		}
		g.signals = append(g.signals, p.Signal)
		if p.Routes > g.routes {
			g.routes, g.route = p.Routes, p.Route
		}
		if g.detail == "" && p.Detail != p.Reason {
			g.detail = p.Detail
		}
	}
	out := make(map[string]condlog.Line, len(by))
	for reason, g := range by {
		attrs := []any{"reason", reason, "signals", len(g.signals), "first", condlog.FirstFew(g.signals), "routes", g.routes, "route", g.route}
		if g.detail != "" {
			attrs = append(attrs, "detail", g.detail)
		}
		out[reason] = condlog.Line{Level: slog.LevelWarn, Msg: "signal queries failed", Attrs: attrs,
			Same: strings.Join(g.signals, ",") + "\n" + g.detail, End: "signal queries answer again"}
	}
	return out
}

// queryErrors records the error of each failed query of one tick, by the
// names of the signals that send it; its query method is safe for the
// concurrent queries of a tick.
type queryErrors struct {
	signalsOf map[string][]string // TickQuery → signal names
	mu        sync.Mutex
	failed    map[string]error // signal → error
}

func newQueryErrors(signals []rules.SignalConfig) *queryErrors {
	q := &queryErrors{signalsOf: map[string][]string{}, failed: map[string]error{}}
	for _, s := range signals {
		tq := s.TickQuery()
		q.signalsOf[tq] = append(q.signalsOf[tq], s.Name)
	}
	return q
}

// wrap returns query recording its errors in q.
func (q *queryErrors) wrap(query promapi.RouteQueryFunc) promapi.RouteQueryFunc {
	return func(ctx context.Context, text string, t time.Time, into *promapi.Answer) error {
		err := query(ctx, text, t, into)
		if err != nil {
			q.mu.Lock()
			for _, s := range q.signalsOf[text] {
				q.failed[s] = err
			}
			q.mu.Unlock()
		}
		return err
	}
}
