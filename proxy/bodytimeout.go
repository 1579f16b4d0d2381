package proxy

import (
	"context"
	"errors"
	"io"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// errClientBody is the cause of an upstream call cancelled because its
// caller stopped sending the request body.
var errClientBody = errors.New("client_body_timeout exceeded: the caller stopped sending the request body")

// clientBody is a caller's request body held to client_body_timeout, as
// nginx's client_body_timeout holds it: a read that gets nothing from the
// caller for that long fails, instead of holding the upstream call and
// the route's slot until the caller goes away. Neither the route's
// first-byte timeout nor a cancelled context ends such a read (the
// transport reads the body before the call, for a body read ahead, or in
// a goroutine of its own, and returns only once that read does), so the
// deadline is the connection's own: set before each read through
// http.ResponseController, a gap between two reads and not the whole
// body, and lifted at the body's end, since net/http's server then reads
// the connection to see the caller hang up during the reply. A timeout
// cancels the call with errClientBody and counts it; the route's error
// handler answers 408. (net/http's server lifts the deadline too, when it
// starts watching the connection at the body's end; HTTP/2 does not.)
type clientBody struct {
	rc       io.ReadCloser
	ctl      deadliner
	timeout  time.Duration
	cancel   context.CancelCauseFunc
	counter  *prometheus.CounterVec
	route    string
	now      func() time.Time
	timedOut atomic.Bool
	// unsupported is set when the server cannot set a read deadline (a
	// ResponseWriter that does not reach net/http's): the body is then
	// read unbounded, as before.
	unsupported bool
	// closed is closed once the body is (nil: not watched): the front
	// waits for the transport to be done with the caller's connection.
	closed    chan struct{}
	closeOnce sync.Once
}

// deadliner sets the read deadline of the caller's connection: the
// connection itself on the fasthttp front, an http.ResponseController on
// net/http's server.
type deadliner interface {
	SetReadDeadline(time.Time) error
}

type clientBodyKey struct{}

// holdClientBody returns r with its body, if it has one, held to timeout
// and a context that the timeout cancels; stop releases the context.
func holdClientBody(w http.ResponseWriter, r *http.Request, route string, timeout time.Duration, counter *prometheus.CounterVec) (_ *http.Request, stop func()) {
	if r.Body == nil || r.Body == http.NoBody || r.ContentLength == 0 {
		return r, func() {}
	}
	ctx, cancel := context.WithCancelCause(r.Context())
	b := &clientBody{rc: r.Body, ctl: http.NewResponseController(w), timeout: timeout, cancel: cancel, counter: counter, route: route, now: time.Now}
	r = r.WithContext(context.WithValue(ctx, clientBodyKey{}, b))
	r.Body = b
	return r, func() { cancel(nil) }
}

// clientBodyTimedOut says whether r's caller stopped sending its body.
func clientBodyTimedOut(r *http.Request) bool {
	b, _ := r.Context().Value(clientBodyKey{}).(*clientBody)
	return b != nil && b.timedOut.Load()
}

func (b *clientBody) Read(p []byte) (int, error) {
	if b.timedOut.Load() {
		return 0, errClientBody
	}
	if !b.unsupported {
		if err := b.ctl.SetReadDeadline(b.now().Add(b.timeout)); errors.Is(err, http.ErrNotSupported) {
			b.unsupported = true
		}
	}
	n, err := b.rc.Read(p)
	switch {
	case err == io.EOF && !b.unsupported:
		_ = b.ctl.SetReadDeadline(time.Time{})
	case err != nil && errors.Is(err, os.ErrDeadlineExceeded):
		b.timedOut.Store(true)
		b.counter.WithLabelValues(b.route).Inc()
		b.cancel(errClientBody)
		return n, errClientBody
	}
	return n, err
}

func (b *clientBody) Close() error {
	if b.closed != nil {
		b.closeOnce.Do(func() { close(b.closed) })
	}
	return b.rc.Close()
}

// wait returns once the body is closed; a nil body, or one not watched,
// at once.
func (b *clientBody) wait() {
	if b != nil && b.closed != nil {
		<-b.closed
	}
}
