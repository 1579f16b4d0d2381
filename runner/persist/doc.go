// Package persist owns what Hermes remembers across restarts without a
// database: the core's saved state (evaluator.SavedRoute of every route,
// each service's split, the active alerts) exported as Hermes's own series,
// and restored from them at start-up, the way Prometheus restores alert
// state from ALERTS_FOR_STATE.
//
// The series names live here (names.go), Exporter writes them on a
// registry every tick (export.go), and Restore reads them back through a
// PromQL query function (restore.go); when Prometheus has nothing to give,
// FromActuators infers the state from the split the actuators hold
// (actuators.go). Nobody else reads or writes these series.
//
// What Prometheus may not know yet, the operators' overrides, running
// drills and the alerts that just became active, is kept on disk in the
// local state file (Local, local.go), and Load merges both.
//
// Stage (stage.go) is the persist stage of the live loop, the one owner
// of the restart memory: it restores at start-up, exports the saved
// series and keeps the local state file every tick, and reads the series
// back for the status page.
package persist
