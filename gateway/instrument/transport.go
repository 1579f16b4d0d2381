package instrument

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/hermes-failover/hermes/gateway/validate"
)

type routeKey struct{}

// WithRoute returns a context whose requests are recorded under route,
// overriding the route a Transport was made with (for one client that
// serves several routes).
func WithRoute(ctx context.Context, route string) context.Context {
	return context.WithValue(ctx, routeKey{}, route)
}

func routeOf(ctx context.Context, def string) string {
	if r, ok := ctx.Value(routeKey{}).(string); ok && r != "" {
		return r
	}
	return def
}

// Transport returns an http.RoundTripper that sends requests with next
// (http.DefaultTransport when nil) and records each reply of route, judged
// by v, when its body ends. A request the caller cancelled is not
// recorded; one that failed otherwise is a hard failure with code timeout
// or conn_error. A body the caller closes before its end is judged on what
// was read, without charging the upstream for what was not (truncated,
// invalid_json and empty count as ok then).
func (m *Metrics) Transport(route string, v *validate.Validator, next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	m.InitRoute(route)
	return &transport{m: m, route: route, v: v, next: next}
}

type transport struct {
	m     *Metrics
	route string
	v     *validate.Validator
	next  http.RoundTripper
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Header.Get(ProbeHeader) != "" {
		return t.next.RoundTrip(req)
	}
	call := t.m.Begin(routeOf(req.Context(), t.route), t.v)
	if req.Body != nil && req.Body != http.NoBody {
		// The body is read through the Call, for the caller's cap on
		// the reply; a RoundTripper must not change the caller's
		// request, so a copy carries it.
		out := *req
		out.Body = &requestBody{rc: req.Body, call: call}
		if get := req.GetBody; get != nil {
			// A body sent again (a retry on a new connection) is read
			// again from its start.
			out.GetBody = func() (io.ReadCloser, error) {
				rc, err := get()
				if err != nil {
					return nil, err
				}
				call.requestMu.Lock()
				call.request.Reset()
				call.requestMu.Unlock()
				return &requestBody{rc: rc, call: call}, nil
			}
		}
		req = &out
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		if code, ok := errorCode(req.Context(), err); ok {
			call.Fail(code)
		}
		return nil, err
	}
	call.Reply(resp.StatusCode, resp.Header)
	resp.Body = &body{rc: resp.Body, call: call}
	return resp, nil
}

// errorCode names a failed call; false for a call the caller cancelled.
// http.Client's Timeout may abort the call just before the request's
// context reports its deadline, hence the look at the deadline itself.
func errorCode(ctx context.Context, err error) (string, bool) {
	dl, hasDeadline := ctx.Deadline()
	pastDeadline := hasDeadline && !time.Now().Before(dl.Add(-10*time.Millisecond))
	if errors.Is(ctx.Err(), context.Canceled) && !pastDeadline {
		return "", false
	}
	var ne net.Error
	if pastDeadline || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ne) && ne.Timeout() {
		return CodeTimeout, true
	}
	return CodeConnError, true
}

// requestBody feeds a request's body to its Call as it is sent.
type requestBody struct {
	rc   io.ReadCloser
	call *Call
}

func (b *requestBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.call.Request(p[:n])
	}
	return n, err
}

func (b *requestBody) Close() error { return b.rc.Close() }

// body feeds the reply to its Call as the caller reads it and records it
// once, at its end.
type body struct {
	rc   io.ReadCloser
	call *Call
	once sync.Once
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 {
		b.call.Write(p[:n])
	}
	switch {
	case err == io.EOF:
		b.finish(false)
	case err != nil:
		b.call.Interrupted()
		b.finish(false)
	}
	return n, err
}

func (b *body) Close() error {
	b.finish(true)
	return b.rc.Close()
}

func (b *body) finish(early bool) {
	b.once.Do(func() { b.call.Finish(early) })
}
