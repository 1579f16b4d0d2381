package promapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
)

// QueryRoutes runs q at t and adds every series of its answer to into (a
// RouteQueryFunc, the ticks' path): the answer is streamed and decoded
// series by series straight into into (decodeAnswer), never held whole
// nor as a model.Vector. Its errors are typed as client_golang types them
// (a *v1.Error; readAnswer), so that it keeps Query's contract.
//
// Why not client_golang's request: its api.Client.Do reads the whole body
// into memory before it returns, which is what this path exists to avoid;
// so the request (postForm) and the typing of errors (readAnswer) repeat
// what client_golang's v1 API does, and TestQueryContract holds them to it.
func (c *Client) QueryRoutes(ctx context.Context, q string, t time.Time, into *Answer) error {
	args := url.Values{"query": {q}, "time": {formatTime(t)}}
	if c.server > 0 {
		args.Set("timeout", c.server.String())
	}
	ctx, slot := withDecodeSlot(ctx, c.slots)
	defer slot.release()
	resp, err := postForm(ctx, c.http, c.endpoint, args)
	if err != nil {
		return contextError(ctx, err)
	}
	defer closeBody(resp.Body)
	env, err := readAnswer(resp, c.maxSeries, into.addBytes)
	c.warn(q, env.warnings)
	if err != nil {
		return contextError(ctx, err)
	}
	return nil
}

// contextError is ctx's error when ctx is done (a read cut short by its
// deadline is a timeout, whatever the transport said), else err.
func contextError(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%v)", ctx.Err(), err)
	}
	return err
}

// closeBody reads what little may follow the answer, so that the
// connection can be reused, and closes it.
func closeBody(body io.ReadCloser) {
	_, _ = io.Copy(io.Discard, io.LimitReader(body, 4<<10))
	_ = body.Close()
}

// postForm sends args to endpoint by POST and, where the server refuses
// POST (403, 405, 501), by GET, as client_golang does.
func postForm(ctx context.Context, client *http.Client, endpoint url.URL, args url.Values) (*http.Response, error) {
	encoded := args.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint.String(), strings.NewReader(encoded))
	if err != nil {
		return nil, fmt.Errorf("building the query request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header["Idempotency-Key"] = nil // retried on network errors, like a GET
	resp, err := client.Do(req)
	if err != nil || (resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusMethodNotAllowed && resp.StatusCode != http.StatusNotImplemented) {
		return resp, err
	}
	closeBody(resp.Body)
	endpoint.RawQuery = encoded
	if req, err = http.NewRequestWithContext(ctx, http.MethodGet, endpoint.String(), nil); err != nil {
		return nil, fmt.Errorf("building the query request: %w", err)
	}
	return client.Do(req)
}

// readAnswer decodes an HTTP answer of the query endpoint into series
// handed to each, or returns the error client_golang's v1 API would
// return for it; a failure to read the body is returned as is.
func readAnswer(resp *http.Response, maxSeries int, each func(route, part []byte, v float64)) (envelope, error) {
	code := resp.StatusCode
	if code/100 != 2 {
		if code != http.StatusBadRequest && code != http.StatusUnprocessableEntity {
			body, err := io.ReadAll(resp.Body)
			if err != nil {
				return envelope{}, &readError{err: err}
			}
			typ, msg := httpErrorType(code)
			return envelope{}, &v1.Error{Type: typ, Msg: msg, Detail: string(body)}
		}
		var body strings.Builder
		env, err := decodeAnswer(io.TeeReader(resp.Body, &body), 0, nil)
		var readErr *readError
		switch {
		case errors.As(err, &readErr):
			return env, err
		case err != nil:
			typ, msg := httpErrorType(code)
			return envelope{}, &v1.Error{Type: typ, Msg: msg, Detail: body.String()}
		case env.status == "success":
			return env, &v1.Error{Type: v1.ErrBadResponse, Msg: msgInconsistent}
		case env.errorType == "":
			env.errorType = string(v1.ErrClient)
		}
		if env.errorMsg == "" {
			env.errorMsg = fmt.Sprintf("client error: %d", code)
		}
		return env, &v1.Error{Type: v1.ErrorType(env.errorType), Msg: env.errorMsg}
	}
	env, err := decodeAnswer(resp.Body, maxSeries, each)
	var readErr *readError
	switch {
	case errors.As(err, &readErr):
		return env, err
	case err != nil: // malformed
		return env, &v1.Error{Type: v1.ErrBadResponse, Msg: err.Error()}
	case env.status == "error":
		return env, &v1.Error{Type: v1.ErrorType(env.errorType), Msg: env.errorMsg}
	}
	return env, checkAnswer(env.resultType, env.series, env.floatless, maxSeries)
}

// httpErrorType types an HTTP error without a Prometheus error body, as
// client_golang does.
func httpErrorType(code int) (v1.ErrorType, string) {
	switch code / 100 {
	case 4:
		return v1.ErrClient, fmt.Sprintf("client error: %d", code)
	case 5:
		return v1.ErrServer, fmt.Sprintf("server error: %d", code)
	}
	return v1.ErrBadResponse, fmt.Sprintf("bad response code %d", code)
}

// formatTime writes t as Prometheus reads it: seconds, with a fraction.
func formatTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.Unix())+float64(t.Nanosecond())/1e9, 'f', -1, 64)
}
