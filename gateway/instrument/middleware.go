package instrument

import (
	"net/http"
	"time"

	"github.com/hermes-failover/hermes/gateway/validate"
)

// Middleware returns a handler that serves with next (typically an
// httputil.ReverseProxy to the upstream of route) and records what next
// wrote, judged by v, when next returns. Writes and flushes pass straight
// through, so streams are not held back. A handler that aborts (panics,
// as httputil.ReverseProxy does when the upstream's body breaks) is
// recorded with what it wrote judged as cut. Requests carrying ProbeHeader
// are served unrecorded.
func (m *Metrics) Middleware(route string, v *validate.Validator, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(ProbeHeader) != "" {
			next.ServeHTTP(w, r)
			return
		}
		start := m.now()
		rec := &recorder{ResponseWriter: w, v: v, now: m.now}
		record := func() {
			if rec.c == nil {
				rec.WriteHeader(http.StatusOK)
			}
			res := rec.c.Finish()
			rt := routeOf(r.Context(), route)
			m.Observe(rt, statusCode(rec.status), res, m.now().Sub(start), res.Bytes)
			rec.first.observe(m, rt, res, start)
		}
		defer func() {
			// httputil.ReverseProxy aborts with http.ErrAbortHandler when
			// copying the upstream's body fails (the upstream broke the
			// connection, or stalled until the client left): what was
			// written is judged as cut, then the abort goes on.
			if p := recover(); p != nil {
				if rec.c != nil {
					rec.c.Interrupted()
				}
				record()
				panic(p)
			}
		}()
		next.ServeHTTP(rec, r)
		record()
	})
}

// recorder passes a response through while feeding it to a classifier.
type recorder struct {
	http.ResponseWriter
	v      *validate.Validator
	c      *validate.Classifier
	status int
	now    func() time.Time
	first  firstToken
}

func (r *recorder) WriteHeader(status int) {
	if r.c != nil {
		return
	}
	r.status = status
	r.c = r.v.Start(status, r.Header())
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(p []byte) (int, error) {
	if r.c == nil {
		r.WriteHeader(http.StatusOK)
	}
	r.c.Write(p)
	r.first.check(r.c, r.now)
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
