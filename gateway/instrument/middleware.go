package instrument

import (
	"net/http"
	"time"

	"github.com/hermes-failover/hermes/gateway/validate"
)

// Middleware returns a handler that serves with next (typically an
// httputil.ReverseProxy to the upstream of route) and records what next
// wrote, judged by v, when next returns. Writes and flushes pass straight
// through, so streams are not held back. Requests carrying ProbeHeader are
// served unrecorded.
func (m *Metrics) Middleware(route string, v *validate.Validator, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get(ProbeHeader) != "" {
			next.ServeHTTP(w, r)
			return
		}
		start := m.now()
		rec := &recorder{ResponseWriter: w, v: v, now: m.now}
		next.ServeHTTP(rec, r)
		if rec.c == nil {
			rec.WriteHeader(http.StatusOK)
		}
		res := rec.c.Finish()
		rt := routeOf(r.Context(), route)
		m.Observe(rt, statusCode(rec.status), res, m.now().Sub(start), res.Bytes)
		rec.first.observe(m, rt, res, start)
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
