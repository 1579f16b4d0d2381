package proxy

import (
	"bytes"
	"context"
	"errors"
	"io"
	"math"
	"net"
	"net/http"
	"sync/atomic"
	"time"
)

// timeoutError is a limit that ended an upstream call. It is a net.Error
// whose Timeout is true, so that instrument.UpstreamError names the call
// a timeout, as it names one that met an http.Client's Timeout.
type timeoutError string

func (e timeoutError) Error() string { return string(e) + " exceeded" }
func (timeoutError) Timeout() bool   { return true }
func (timeoutError) Temporary() bool { return true }

const (
	errFirstByte timeoutError = "first_byte_timeout"
	errIdle      timeoutError = "idle_timeout"
	errTotal     timeoutError = "total_timeout"
)

// limited is the upstream transport of a route, held to its time limits:
// the call is cancelled, with the limit as its cause, when the headers
// take longer than FirstByteTimeout, when the body pauses longer than
// IdleTimeout between two reads, or when the whole call takes longer
// than TotalTimeout. (http.Transport's ResponseHeaderTimeout would do the
// first; it is not reachable through prometheus/common's client config,
// and the two others have no Transport setting.)
type limited struct {
	next   http.RoundTripper
	limits Limits
}

func (t *limited) RoundTrip(req *http.Request) (*http.Response, error) {
	// Before the clocks start: a caller slow to send its body is not
	// the upstream's delay.
	body, whole := readAhead(req)
	who, _ := req.Context().Value(callerKey{}).(*caller)
	ctx, cancel, c := startCall(req.Context(), t.limits, who)
	out := req.WithContext(ctx)
	out.Body = body
	if whole != nil {
		// A body in memory can be sent again, on a fresh connection
		// when a kept one turns out closed (see h1Transport).
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(whole)), nil }
	}
	resp, err := t.next.RoundTrip(out)
	if err != nil {
		return nil, c.failed(ctx, cancel, err)
	}
	resp.Body = c.replied(ctx, cancel, resp.Body)
	return resp, nil
}

// startCall starts the clock of an upstream call held to l: the call's
// context, cancelled with the limit that passed as its cause (or
// errCallerGone when who, if not nil, hangs up), and its clock, armed
// for the first byte.
func startCall(parent context.Context, l Limits, who *caller) (context.Context, context.CancelCauseFunc, *clock) {
	ctx, cancel := context.WithCancelCause(parent)
	c := &clock{limits: l, cancel: cancel, caller: who, start: time.Now()}
	// Stored before it is armed: fire, on the timer's goroutine, reads
	// it (the race detector saw fire read it before the assignment of
	// time.AfterFunc's result was known to have happened).
	t := time.AfterFunc(time.Duration(math.MaxInt64), c.fire)
	c.timer.Store(t)
	t.Reset(c.bound(min(l.FirstByteTimeout, l.TotalTimeout)))
	return ctx, cancel, c
}

// failed ends a call that got no reply: its error, or the limit that
// ended it.
func (c *clock) failed(ctx context.Context, cancel context.CancelCauseFunc, err error) error {
	c.stop()
	if cause := context.Cause(ctx); isLimit(cause) {
		err = cause
	}
	cancel(nil)
	return err
}

// replied starts the body's phase of a call that got its reply's headers:
// rc held to the idle and total limits.
func (c *clock) replied(ctx context.Context, cancel context.CancelCauseFunc, rc io.ReadCloser) io.ReadCloser {
	c.reading()
	c.reply = limitedBody{rc: rc, ctx: ctx, cancel: cancel, clock: c}
	return &c.reply
}

// errCallerGone is the cause of an upstream call cancelled because its
// caller hung up.
var errCallerGone = errors.New("the caller hung up")

// callerKey is the context key of the caller (a *caller), which the
// front puts on the upstream request for the clock to watch.
type callerKey struct{}

// caller is the connection of the caller of an upstream call, and
// whether the call's limits (its clock, or a lean exchange's deadlines)
// saw it hang up.
type caller struct {
	conn net.Conn
	gone atomic.Bool
}

// callerCheck is how often a call's limits look at its caller's
// connection while it waits on the upstream: fasthttp's server does not
// see a caller hang up, so they peek (callerGone). A plain reply
// that comes within it costs nothing more; a stream costs one peek
// (a recvfrom) per callerCheck it stays open.
const callerCheck = 250 * time.Millisecond

func isLimit(err error) bool {
	_, ok := err.(timeoutError)
	return ok
}

// clock holds one call to its three limits with a single timer, armed
// for the nearest deadline: a call used to start three (time.AfterFunc
// for the first byte, the total and the idle gap) and reset the idle one
// on every read of the body, a timer-heap update each (about 4 % of the
// proxy's CPU on plain replies under make bench-proxy). A read now only
// notes its time; when the timer fires, fire sees which limit, if any,
// has passed, and otherwise arms the timer again for the nearest
// deadline left.
type clock struct {
	limits Limits
	// caller is the caller, watched for a hang-up while the call is
	// open (nil: not watched).
	caller *caller
	// cancel is the call's context's.
	cancel context.CancelCauseFunc
	start  time.Time
	// reply is the reply's body, once the headers arrived (replied).
	reply limitedBody
	timer atomic.Pointer[time.Timer]
	// body is set once the headers arrived: the first-byte limit is then
	// over and the idle one runs.
	body atomic.Bool
	// last is when the body was last read from, as time since start.
	last atomic.Int64
	done atomic.Bool
}

// reading starts the body's phase: the idle gap runs from now.
func (c *clock) reading() {
	c.last.Store(int64(time.Since(c.start)))
	c.body.Store(true)
	// The armed deadline may lie past the first idle one (the first
	// byte's default is two minutes, the idle gap's one).
	c.timer.Load().Reset(c.bound(min(c.limits.IdleTimeout, c.limits.TotalTimeout-time.Since(c.start))))
}

// bound is d, or callerCheck when the caller is watched and that is
// sooner.
func (c *clock) bound(d time.Duration) time.Duration {
	if c.caller != nil {
		return min(d, callerCheck)
	}
	return d
}

// read notes a read that got bytes.
func (c *clock) read() { c.last.Store(int64(time.Since(c.start))) }

func (c *clock) stop() {
	c.done.Store(true)
	c.timer.Load().Stop()
}

// cancelCall cancels the call with cause.
func (c *clock) cancelCall(cause error) { c.cancel(cause) }

// fire cancels the call for the limit that passed, or arms the timer for
// the nearest deadline left.
func (c *clock) fire() {
	if c.done.Load() {
		return
	}
	if c.caller != nil && callerGone(c.caller.conn) {
		c.caller.gone.Store(true)
		c.cancelCall(errCallerGone)
		return
	}
	now := time.Since(c.start)
	at, cause := limitAt(c.limits, now, c.body.Load(), time.Duration(c.last.Load()))
	if cause != nil {
		c.cancelCall(cause)
		return
	}
	c.timer.Load().Reset(c.bound(at - now))
}

// limitAt is where a call held to l stands at now (time since its
// start): the limit that has passed, or when (time since its start) the
// nearest one left falls. body says the reply's headers are in, so that
// the idle gap runs from last, the body's last read, instead of the
// first byte's limit. The clock and a lean exchange's deadlines both
// decide by it.
func limitAt(l Limits, now time.Duration, body bool, last time.Duration) (time.Duration, error) {
	if now >= l.TotalTimeout {
		return 0, errTotal
	}
	if body {
		if now-last >= l.IdleTimeout {
			return 0, errIdle
		}
		return min(l.TotalTimeout, last+l.IdleTimeout), nil
	}
	if now >= l.FirstByteTimeout {
		return 0, errFirstByte
	}
	return min(l.TotalTimeout, l.FirstByteTimeout), nil
}

// limitedBody is an upstream body whose reads restart the idle gap.
type limitedBody struct {
	rc     io.ReadCloser
	ctx    context.Context
	cancel context.CancelCauseFunc
	clock  *clock
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.clock.read()
	}
	if err != nil && err != io.EOF {
		if cause := context.Cause(b.ctx); isLimit(cause) {
			err = cause
		}
	}
	return n, err
}

// ready passes the upstream body's readiness on (see bodyReady).
func (b *limitedBody) ready() bool { return bodyReady(b.rc) }

func (b *limitedBody) Close() error {
	b.clock.stop()
	err := b.rc.Close()
	b.cancel(nil)
	return err
}
