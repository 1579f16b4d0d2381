// Package evaluator is Hermes's pure core: it scores routes from a
// Snapshot of signals, walks each route through graded levels, plans each
// service's traffic split, applies operators' commands and evaluates the
// alert rules.
//
// The policy is a rules.Policy, which the loader, rules/config, builds
// from the configuration file (config.Config.Rules); NewPolicy prepares it
// once per load. A tick of the live loop (package runner) looks like this:
//
//	snap := collector.Collect(ctx, query, cfg.Signals, pol.Routes(), t, timeout) // a promapi.Collector
//	next, events := evaluator.Step(pol, prev, evaluator.Input{Snapshot: snap, Commands: queued}, t)
//	// the shell: export next (telemetry, persist), audit events,
//	// actuate next.Services, send next.Alerts
//	prev = next
//
// Step never reads the clock, the network or files: the same code runs live
// (hermes run), over recorded or synthetic series (hermes backtest) and in
// tests. What survives a restart is SavedRoute (package runner/persist
// exports and restores it); what identifies an alert is alert.go's.
package evaluator
