package proxy

import (
	"context"
	"errors"
	"net"
	"os"
	"time"
)

// deadlines holds a lean exchange to its route's limits through the
// upstream connection's own deadlines, as nginx holds a proxied request
// to proxy_read_timeout: no timer, context or goroutine of the call's
// own. The read deadline is the nearest of the first byte's (the idle
// gap's once the headers are in), the total's and the next look at the
// caller (callerCheck); when it passes, the read that waits sees which
// limit has passed, if any, and otherwise moves the deadline on and
// waits again (h1Conn.Read). A read that gets bytes only notes its time.
// The write deadline is the first byte's or the total's, whichever comes
// first: the lean exchange writes a request of a few KiB once, before it
// reads.
//
// Why not the clock of limits.go, which the RoundTripper path keeps: its
// timer, the call's context and the watch that closed the connection
// when the timer fired were five of the 16 allocations of a plain reply,
// and three timer-heap updates (docs/scale.md, the seventh pass).
//
// A deadlines has one user, the goroutine that serves the call (the
// fasthttp server's, which writes the reply's body as it reads it).
type deadlines struct {
	limits Limits
	caller *caller // nil: not watched
	start  time.Time
	// body is set once the reply's headers are in: the idle gap runs,
	// from last (time since start), the last read that got bytes.
	body bool
	last time.Duration
	// read is the read deadline set on the connection.
	read time.Time
	// cause is the limit that ended the call, or errCallerGone.
	cause error
}

// begin starts the call's limits now.
func (d *deadlines) begin(l Limits, who *caller) {
	*d = deadlines{limits: l, caller: who, start: time.Now()}
}

// firstBound is how long after the start the headers may come: the first
// byte's limit, or the total's if that is sooner.
func (d *deadlines) firstBound() time.Duration {
	return min(d.limits.FirstByteTimeout, d.limits.TotalTimeout)
}

// check is how long after the start the caller is looked at next, when
// that is before the deadline at (time since start).
func (d *deadlines) check(now, at time.Duration) time.Duration {
	if d.caller != nil {
		return min(at, now+callerCheck)
	}
	return at
}

// arm sets conn's deadlines for the call's request and headers (a
// connection from the pool, or one dialled for the call).
func (d *deadlines) arm(conn net.Conn) error {
	first := d.firstBound()
	now := time.Since(d.start)
	d.read = d.start.Add(d.check(now, first))
	if w := d.start.Add(first); w.Equal(d.read) {
		return conn.SetDeadline(w) // one timer for both
	} else if err := conn.SetWriteDeadline(w); err != nil {
		return err
	}
	return conn.SetReadDeadline(d.read)
}

// replied starts the body's phase: the idle gap runs from now. The read
// deadline moves only when the gap ends before it.
func (d *deadlines) replied(conn net.Conn) error {
	d.body = true
	d.last = time.Since(d.start)
	if idle := d.start.Add(d.last + d.limits.IdleTimeout); idle.Before(d.read) {
		d.read = idle
		return conn.SetReadDeadline(idle)
	}
	return nil
}

// noted notes a read that got bytes.
func (d *deadlines) noted() {
	if d.body {
		d.last = time.Since(d.start)
	}
}

// expired is the look when the read deadline passed: the cause of the
// call's end, when a limit passed or the caller hung up, or nil and the
// next read deadline set in d.read.
func (d *deadlines) expired() error {
	if d.caller != nil && callerGone(d.caller.conn) {
		d.caller.gone.Store(true)
		d.cause = errCallerGone
		return d.cause
	}
	now := time.Since(d.start)
	at, cause := limitAt(d.limits, now, d.body, d.last)
	if cause != nil {
		d.cause = cause
		return cause
	}
	d.read = d.start.Add(d.check(now, at))
	return nil
}

// writeCause is the limit a write that met its deadline ran into.
func (d *deadlines) writeCause() error {
	if d.limits.TotalTimeout <= d.limits.FirstByteTimeout {
		d.cause = errTotal
	} else {
		d.cause = errFirstByte
	}
	return d.cause
}

// dial dials a connection for the call, held to its limits and its
// caller by a clock of limits.go: a dial is rare (the pool keeps the
// connections) and may wait in the kernel, where no deadline reaches.
func (d *deadlines) dial(t *h1Transport, key connKey, host string) (*h1Conn, error) {
	ctx, cancel, clk := startCall(context.Background(), d.limits, d.caller)
	c, err := t.dial(ctx, key, host)
	if err != nil {
		if cause := context.Cause(ctx); cause == errCallerGone || isLimit(cause) {
			d.cause = cause
		}
		return nil, clk.failed(ctx, cancel, err)
	}
	clk.stop()
	cancel(nil)
	return c, nil
}

// isDeadline says whether err is a connection's deadline that passed.
func isDeadline(err error) bool { return errors.Is(err, os.ErrDeadlineExceeded) }
