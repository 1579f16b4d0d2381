package instrument

import (
	"context"
	"net/http"

	"github.com/hermes-failover/hermes/gateway/validate"
)

// Middleware returns a handler that serves with next (typically an
// httputil.ReverseProxy to the upstream of route) and records what next
// wrote, judged by v, when next returns. Writes and flushes pass straight
// through, so streams are not held back. A handler that aborts (panics,
// as httputil.ReverseProxy does when the upstream's body breaks) is
// recorded with what it wrote judged as cut. A caller that hung up, before
// the reply or during it, is not recorded: the upstream is not charged for
// it. next's error handler reports a call that got no reply with
// UpstreamError, so that it is recorded as Transport records it. Requests
// carrying ProbeHeader are served unrecorded.
func (m *Metrics) Middleware(route string, v *validate.Validator, next http.Handler) http.Handler {
	m.InitRoute(route)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(ProbeHeader) != "" {
			next.ServeHTTP(w, r)
			return
		}
		rec := &recorder{ResponseWriter: w, call: m.Begin(routeOf(r.Context(), route), v), ctx: r.Context()}
		r = r.WithContext(context.WithValue(r.Context(), recorderKey{}, rec))
		if r.Body != nil && r.Body != http.NoBody {
			r.Body = &requestBody{rc: r.Body, call: rec.call}
		}
		record := func() {
			switch {
			case rec.gone:
				return
			case rec.failed != "":
				rec.call.Fail(rec.failed)
				return
			}
			if !rec.call.Replied() {
				rec.WriteHeader(http.StatusOK)
			}
			rec.call.Finish(false)
		}
		defer func() {
			// httputil.ReverseProxy aborts with http.ErrAbortHandler when
			// copying the upstream's body fails (the upstream broke the
			// connection, or stalled until the client left): what was
			// written is judged as cut, then the abort goes on.
			// The caller hanging up aborts it too: that is not recorded.
			if p := recover(); p != nil {
				if rec.call.Replied() {
					rec.call.Interrupted()
				}
				if rec.ctx.Err() == nil {
					record()
				}
				panic(p)
			}
		}()
		next.ServeHTTP(rec, r)
		record()
	})
}

// UpstreamError classifies err, the error of an upstream call that got no
// reply, as Transport does: it returns CodeTimeout or CodeConnError, or ""
// when the caller of r hung up. Called from the error handler of the
// handler a Middleware wraps (httputil.ReverseProxy's ErrorHandler), with
// the request it was given, it also tells the Middleware to record the
// call as Transport records it: a hard failure with that code and no
// size, or nothing for a caller that hung up.
func UpstreamError(r *http.Request, err error) string {
	code, ok := errorCode(r.Context(), err)
	if rec, _ := r.Context().Value(recorderKey{}).(*recorder); rec != nil {
		rec.failed, rec.gone = code, !ok
	}
	return code
}

type recorderKey struct{}

// recorder passes a response through while feeding it to its Call.
type recorder struct {
	http.ResponseWriter
	call *Call
	ctx  context.Context // the caller's request
	// failed is the code UpstreamError gave; gone says the caller hung up
	// before the reply began.
	failed string
	gone   bool
}

func (r *recorder) WriteHeader(status int) {
	if r.call.Replied() {
		return
	}
	if r.ctx.Err() != nil {
		// The caller left before the reply began: this status (a
		// reverse proxy's 502 for the cancelled call) is not the upstream's.
		r.gone = true
	}
	r.call.Reply(status, r.Header())
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(p []byte) (int, error) {
	if !r.call.Replied() {
		r.WriteHeader(http.StatusOK)
	}
	r.call.Write(p)
	return r.ResponseWriter.Write(p)
}

// Flush passes a flush on, so that streamed events are not held back.
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
