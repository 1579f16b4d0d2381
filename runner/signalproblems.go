package runner

import (
	"cmp"
	"log/slog"
	"slices"

	"github.com/hermes-failover/hermes/evaluator"
)

// logSignalProblems logs the tick's failed signal queries once per signal
// and reason, with the number of routes affected and one of them: a query
// fails for every route it covers, so one line per route would be 10,000
// lines per failed signal and tick in a large fleet.
func logSignalProblems(log *slog.Logger, snap evaluator.Snapshot) {
	type problem struct{ signal, reason string }
	type seen struct {
		routes int
		route  string // the first in name order, so the line is stable
	}
	problems := map[problem]*seen{}
	for cell, smp := range snap.All() {
		if smp.Status != evaluator.StatusError {
			continue
		}
		route, sig := cell[0], cell[1]
		k := problem{sig, smp.Reason}
		p := problems[k]
		if p == nil {
			p = &seen{route: route}
			problems[k] = p
		}
		p.routes++
		p.route = min(p.route, route)
	}
	keys := make([]problem, 0, len(problems))
	for k := range problems {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b problem) int {
		return cmp.Or(cmp.Compare(a.signal, b.signal), cmp.Compare(a.reason, b.reason))
	})
	for _, k := range keys {
		p := problems[k]
		log.Warn("signal query failed", "signal", k.signal, "reason", k.reason, "routes", p.routes, "route", p.route)
	}
}
