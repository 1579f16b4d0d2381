package promapi

import (
	"errors"
	"fmt"
	"io"
	"net/http"
)

// ErrResponseTooLarge is the error of a query whose answer is larger than
// prometheus.max_response_bytes; its signal fails for that tick with the
// reason "response_too_large".
var ErrResponseTooLarge = errors.New("response larger than prometheus.max_response_bytes")

// TooManySeriesError is the error of a query whose answer holds more series
// than prometheus.max_series_per_query; its signal fails for that tick
// with the reason "too_many_series".
type TooManySeriesError struct{ Series, Max int }

func (e *TooManySeriesError) Error() string {
	return fmt.Sprintf("%d series, more than prometheus.max_series_per_query (%d)", e.Series, e.Max)
}

// limitBodies makes every response body of rt fail with ErrResponseTooLarge
// once more than max bytes have been read (0: no bound). client_golang
// (Client.Query) reads a whole answer before decoding it, so this is what
// bounds the memory one query can take; the tick's streamed answers
// (Client.QueryRoutes) fail alike past the bound.
func limitBodies(rt http.RoundTripper, max int64) http.RoundTripper {
	if max <= 0 {
		return rt
	}
	return roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err != nil {
			return resp, err
		}
		resp.Body = &limitedBody{rc: resp.Body, left: max}
		return resp, nil
	})
}

type roundTripperFunc func(*http.Request) (*http.Response, error)

func (f roundTripperFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// limitedBody reads at most left bytes, then fails.
type limitedBody struct {
	rc   io.ReadCloser
	left int64
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.left < 0 {
		return 0, ErrResponseTooLarge
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1] // one byte more tells "exactly max" from "more"
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n, ErrResponseTooLarge
	}
	return n, err
}

func (b *limitedBody) Close() error { return b.rc.Close() }
