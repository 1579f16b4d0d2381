package proxy

import (
	"context"
	"errors"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/gateway/instrument"
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
// deadline is the connection's own: set before each read, a gap between
// two reads and not the whole body, and lifted at the body's end. A
// timeout cancels the call with errClientBody and counts it; the front
// answers 408 (or cuts the reply, if it had begun) and records nothing.
type clientBody struct {
	rc       io.ReadCloser
	ctl      deadliner
	timeout  time.Duration
	cancel   context.CancelCauseFunc
	counter  *prometheus.CounterVec
	route    string
	now      func() time.Time
	timedOut atomic.Bool
	// perReadOff says no deadline is set per read: the connection
	// cannot set one (the body is then read unbounded), or the body is
	// read under the deadline set when its headers arrived (the lean
	// exchange's few KiB, with ctl and now nil).
	perReadOff bool
	// closed is closed once the body is (nil: not watched): the front
	// waits for the transport to be done with the caller's connection.
	closed    chan struct{}
	closeOnce sync.Once
	// call, when the reply is judged, reads the caller's cap on the
	// reply (max_tokens) from the body as it passes.
	call *instrument.Call
}

// deadliner sets the read deadline of the caller's connection.
type deadliner interface {
	SetReadDeadline(time.Time) error
}

func (b *clientBody) Read(p []byte) (int, error) {
	if b.timedOut.Load() {
		return 0, errClientBody
	}
	if !b.perReadOff {
		if err := b.ctl.SetReadDeadline(b.now().Add(b.timeout)); err != nil {
			b.perReadOff = true
		}
	}
	n, err := b.rc.Read(p)
	if n > 0 && b.call != nil {
		b.call.Request(p[:n])
	}
	switch {
	case err == io.EOF && !b.perReadOff:
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
