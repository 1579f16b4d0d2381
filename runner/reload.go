package runner

import (
	"context"
	"sync"
	"time"

	"github.com/hermes-failover/hermes/runner/auditlog"
)

// reloadQueue holds at most one pending reload. Requests that arrive while
// one is pending join it and get its result, so a flood of requests costs
// one load per ReloadInterval, and the tick loop never waits for any: the
// configuration is loaded beside it and swapped in under the lock, and the
// next tick takes it.
type reloadQueue struct {
	mu      sync.Mutex
	pending *reloadCall
	kick    chan struct{} // buffered 1: a pending call to pick up
	// failed is the last reload's failure, kept until a reload succeeds:
	// the status page shows it in its header (View.ReloadFailure).
	failed *ReloadFailure
	// retired close the query sides that reloads replaced (retire).
	retired []func()
}

// ReloadFailure is a rejected reload: the configuration loaded at
// View.LoadedAt keeps running.
type ReloadFailure struct {
	// At is the last rejected reload, Since the first of those in a row;
	// Count how many were rejected since the last good one.
	At, Since time.Time
	Count     int
	Error     string
}

// failure records the outcome of the reload at now: err rejected it, or
// nil cleared any failure kept.
func (q *reloadQueue) failure(err error, now time.Time) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if err == nil {
		q.failed = nil
		return
	}
	f := &ReloadFailure{At: now, Since: now, Count: 1, Error: err.Error()}
	if q.failed != nil {
		f.Since, f.Count = q.failed.Since, q.failed.Count+1
	}
	q.failed = f
}

// lastFailure is the failure kept since the last good reload, or nil.
func (q *reloadQueue) lastFailure() *ReloadFailure {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.failed
}

// reloadCall is one load that any number of requests wait for.
type reloadCall struct {
	done chan struct{}
	err  error
}

// Reload asks for the configuration to be loaded again and waits for the
// load that serves the request (one that starts after the request). An
// invalid configuration is rejected, logged and counted; the old one keeps
// running. Requests are answered only while Run runs.
func (r *Runner) Reload(ctx context.Context) error {
	r.stages.telemetry.ReloadRequested()
	q := &r.reloads
	q.mu.Lock()
	c := q.pending
	if c == nil {
		c = &reloadCall{done: make(chan struct{})}
		q.pending = c
		select {
		case q.kick <- struct{}{}:
		default:
		}
	}
	q.mu.Unlock()
	select {
	case <-c.done:
		return c.err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// runReloads serves reload requests until ctx ends, one load at a time and
// at most one per ReloadInterval.
func (r *Runner) runReloads(ctx context.Context) {
	q := &r.reloads
	var last time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-q.kick:
		}
		if wait := r.opts.ReloadInterval - r.opts.Now().Sub(last); !last.IsZero() && wait > 0 {
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return
			case <-t.C:
			}
		}
		q.mu.Lock()
		c := q.pending
		q.pending = nil // requests from now on need a new load
		q.mu.Unlock()
		if c == nil {
			continue
		}
		last = r.opts.Now()
		c.err = r.reload()
		close(c.done)
	}
}

// reload loads, validates and builds the configuration, and swaps it in
// when it is valid. It writes one audit record and one log line per load.
func (r *Runner) reload() error {
	ld, err := r.load()
	now := r.opts.Now()
	if err == nil {
		err = r.stages.alerting.ApplyConfig(ld.cfg.Alerting, ld.cfg.Global.EvaluationInterval)
	}
	r.reloads.failure(err, now)
	if err != nil {
		r.stages.telemetry.ConfigReload(false, now)
		r.log.Error("configuration rejected; the previous one keeps running", "file", r.opts.ConfigPath, "err", err)
		r.opts.Audit.Write(auditlog.Record{Time: now, Type: "reload", Result: "rejected", Error: err.Error()})
		return err
	}
	r.swap(ld)
	r.stages.telemetry.ConfigReload(true, now)
	r.log.Info("configuration reloaded", "file", r.opts.ConfigPath)
	r.opts.Audit.Write(auditlog.Record{Time: now, Type: "reload", Result: "ok"})
	return nil
}

// retire keeps the closer of old's query side, which a reload replaced,
// for the next tick to run (takeRetired): a tick in flight may still be
// querying through it, and the ticks, which run one after the other on
// the loop's goroutine, are its only users once restore has returned.
// Before, each reload left the old Prometheus client's keep-alive
// connections open, with their goroutines, until Prometheus closed them
// (120 reloads: goroutines from 20 to 500).
func (r *Runner) retire(old loaded) {
	if old.closeQuery == nil {
		return
	}
	q := &r.reloads
	q.mu.Lock()
	defer q.mu.Unlock()
	q.retired = append(q.retired, old.closeQuery)
}

// takeRetired hands the closers retired so far to a tick that is about to
// run: the ticks that could use their clients have returned.
func (r *Runner) takeRetired() []func() {
	q := &r.reloads
	q.mu.Lock()
	defer q.mu.Unlock()
	out := q.retired
	q.retired = nil
	return out
}

func closeAll(closers []func()) {
	for _, c := range closers {
		c()
	}
}
