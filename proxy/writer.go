package proxy

import "net/http"

// flushWriter flushes every write to the client as it is made, so that a
// reply reaches the caller as the upstream sends it, as nginx's
// proxy_buffering off does. httputil.ReverseProxy's own way to do that,
// a negative FlushInterval, also starts a timer for every reply that
// fires at once to send the headers alone, on a goroutine of its own:
// for a plain reply that was one more write system call and one more
// goroutine hand-off per request (the headers, then the body), against
// nginx's one write of both; here the headers leave with the first piece
// of the body. (ReverseProxy still flushes a stream's headers at once:
// for text/event-stream and bodies of unknown length it ignores
// FlushInterval.)
type flushWriter struct {
	http.ResponseWriter
}

func (w *flushWriter) Write(p []byte) (int, error) {
	n, err := w.ResponseWriter.Write(p)
	if err == nil {
		// A failed flush fails the next write, as with ReverseProxy's
		// own flushing, which ignores it too.
		w.Flush()
	}
	return n, err
}

// Flush passes a flush on (http.Flusher, for instrument's recorder).
func (w *flushWriter) Flush() {
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *flushWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
