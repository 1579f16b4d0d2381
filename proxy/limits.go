package proxy

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
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
	ctx, cancel := context.WithCancelCause(req.Context())
	out := req.WithContext(ctx)
	out.Body = body
	if whole != nil {
		// A body in memory can be sent again, on a fresh connection
		// when a kept one turns out closed (see h1Transport).
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(whole)), nil }
	}
	total := time.AfterFunc(t.limits.TotalTimeout, func() { cancel(errTotal) })
	first := time.AfterFunc(t.limits.FirstByteTimeout, func() { cancel(errFirstByte) })
	resp, err := t.next.RoundTrip(out)
	first.Stop()
	if err != nil {
		total.Stop()
		if cause := context.Cause(ctx); isLimit(cause) {
			err = cause
		}
		cancel(nil)
		return nil, err
	}
	b := &limitedBody{rc: resp.Body, ctx: ctx, cancel: cancel, total: total, idle: t.limits.IdleTimeout}
	b.timer = time.AfterFunc(b.idle, func() { cancel(errIdle) })
	resp.Body = b
	return resp, nil
}

func isLimit(err error) bool {
	_, ok := err.(timeoutError)
	return ok
}

// limitedBody is an upstream body whose reads restart the idle timer.
type limitedBody struct {
	rc     io.ReadCloser
	ctx    context.Context
	cancel context.CancelCauseFunc
	total  *time.Timer
	timer  *time.Timer
	idle   time.Duration
	once   sync.Once
}

func (b *limitedBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.timer.Reset(b.idle)
	}
	if err != nil && err != io.EOF {
		if cause := context.Cause(b.ctx); isLimit(cause) {
			err = cause
		}
	}
	return n, err
}

func (b *limitedBody) Close() error {
	b.once.Do(func() {
		b.timer.Stop()
		b.total.Stop()
	})
	err := b.rc.Close()
	b.cancel(nil)
	return err
}
