// Package evaluator is Hermes's tick: it scores routes from a Snapshot of
// signals, walks each route through graded levels, plans each service's
// traffic split and evaluates alert rules.
//
// The core is pure. A tick looks like this:
//
//	snap := evaluator.Collect(ctx, query, cfg.Signals, pol.Routes(), t, timeout)
//	next, events := evaluator.Step(pol, prev, snap, t)
//	// the shell: export next as metrics, actuate next.Services, send alerts
//	prev = next
//
// Step never reads the clock, the network or files: the same code runs live
// (hermes run), over recorded or synthetic series (hermes backtest) and in
// tests.
package evaluator
