// Package auditlog is Hermes's audit log: one JSON object per line for
// every decision of the core, actuation, reload, restore and operator
// action. It is a sink that the loop and the stages write to, as they
// log to a *slog.Logger; it owns its file, its lock and the count of
// failed writes, and keeps no state of theirs.
package auditlog

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Record is an actuation, reload, restore or operator action; the
// core's decisions are written as evaluator.Event.
type Record struct {
	Time     time.Time      `json:"time"`
	Type     string         `json:"type"`
	Actuator string         `json:"actuator,omitempty"`
	Service  string         `json:"service,omitempty"`
	Route    string         `json:"route,omitempty"`
	Weights  map[string]int `json:"weights,omitempty"`
	// Holds is what the backend holds after applying, when it differs
	// from Weights (a rate-limited step, a dry run).
	Holds  map[string]int `json:"holds,omitempty"`
	Result string         `json:"result,omitempty"`
	Error  string         `json:"error,omitempty"`
	Reason string         `json:"reason,omitempty"`
	By     string         `json:"by,omitempty"`
}

// Log writes one JSON object per line: every level change, failback
// step, traffic change, alert transition, override and actuation, with its
// reasons. A nil *Log discards.
//
// A failed write never stops the evaluator, and never stops the log
// either: it is logged and counted (hermes_audit_write_errors_total, the
// watchdog's HermesAuditWriteFailing), and the next record is encoded
// afresh; a log opened by path is reopened first, so a deleted file is
// recreated. Reopen (on SIGHUP) follows logrotate's `create`.
type Log struct {
	mu   sync.Mutex
	w    io.Writer
	path string   // set by Open
	f    *os.File // the open file of path; nil after a failed write
	errs prometheus.Counter
	log  *slog.Logger
	// lost counts the records lost since the last one written: the
	// failure is logged at the first of them and when a record is written
	// again, not at every record (a tick may audit thousands).
	lost int
}

// New writes JSON lines to w.
func New(w io.Writer) *Log { return &Log{w: w} }

// Open appends JSON lines to the file at path, created if need be.
func Open(path string) (*Log, error) {
	a := &Log{path: path}
	if err := a.open(); err != nil {
		return nil, err
	}
	return a, nil
}

// open (re)opens a.path; a.mu must be held or a not yet shared.
func (a *Log) open() error {
	f, err := os.OpenFile(a.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return fmt.Errorf("audit log: %w", err)
	}
	if a.f != nil {
		_ = a.f.Close()
	}
	a.f, a.w = f, f
	return nil
}

// Reopen opens the audit log's file again by its path (after log
// rotation moved it away); a log not opened by path is left alone.
func (a *Log) Reopen() error {
	if a == nil || a.path == "" {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.open()
}

// Close closes the file of a log opened by path.
func (a *Log) Close() error {
	if a == nil || a.f == nil {
		return nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	err := a.f.Close()
	a.f = nil
	return err
}

// Register counts failed writes on reg and logs them on logger.
func (a *Log) Register(reg prometheus.Registerer, logger *slog.Logger) {
	if a == nil {
		return
	}
	c := prometheus.NewCounter(prometheus.CounterOpts{
		Name: "hermes_audit_write_errors_total",
		Help: "Audit log records that could not be written (each is lost).",
	})
	reg.MustRegister(c)
	a.mu.Lock()
	a.errs, a.log = c, logger
	a.mu.Unlock()
}

// Write appends one record.
func (a *Log) Write(v any) {
	if a == nil {
		return
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf) // one per record: an Encoder keeps its first error
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	a.mu.Lock()
	defer a.mu.Unlock()
	if err == nil && a.w == nil && a.path != "" {
		err = a.open()
	}
	if err == nil {
		_, err = a.w.Write(buf.Bytes())
	}
	if err == nil {
		if a.lost > 0 && a.log != nil {
			a.log.Info("the audit log is written again", "file", a.path, "lost", a.lost)
		}
		a.lost = 0
		return
	}
	if a.errs != nil {
		a.errs.Inc()
	}
	if a.lost == 0 && a.log != nil {
		a.log.Error("cannot write the audit log; records are lost until a write succeeds (counted in hermes_audit_write_errors_total)", "file", a.path, "err", err)
	}
	a.lost++
	if a.f != nil { // reopen at the next record: the file may be gone
		_ = a.f.Close()
		a.f, a.w = nil, nil
	}
}
