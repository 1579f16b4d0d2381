// Package backtest feeds the evaluator recorded or synthetic series instead of
// a live Prometheus, so that `hermes backtest` runs the same core over the
// past. Two sources answer an promapi.QueryFunc.
//
// Store holds a series file in promtool's input_series notation (see
// Parse) in memory and runs each instant query on the real PromQL engine:
//
//	f, err := backtest.ParseFile("testdata/incident.yaml")
//	b, err := backtest.Open(f)
//	defer b.Close()
//	for t := b.Start(); !t.After(b.End()); t = t.Add(b.Step()) {
//		snap := collector.Collect(ctx, promapi.VectorRoutes(b.Query), cfg.Signals, routes, t, timeout)
//		// score, decide, plan ...
//	}
//
// RunStore does the same faster: it evaluates each signal once per
// DefaultWindow of the range (range queries on the same engine, see Windowed) and steps
// the ticks through the results, so a day of a fleet replays in seconds
// and memory holds two windows' results; the ticks' snapshots are
// collected ahead while the core steps. The sub-expressions the signals
// share are recorded once per step (see Recorder), and the series are held
// in the TSDB's compressed chunks (OpenFile compresses each as it reads
// the file). hermes backtest --series uses it.
//
// RangeCache replays a real Prometheus: one range query per signal over the
// backtest window, answered tick by tick from memory, so the core sees the
// vectors it would have seen live.
package backtest
