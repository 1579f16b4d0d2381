package promapi

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/hermes-failover/hermes/rules/config"
)

// NewRouteQueryFunc returns a RouteQueryFunc over the /api/v1/query
// endpoint of the prometheus section of the configuration, the tick's
// path: each answer is streamed and decoded series by series straight
// into its Answer (decodeAnswer), never held whole nor as a model.Vector.
// It behaves as NewQueryFunc over NewAPI(cfg): the same HTTP client
// settings, server-side timeout and errors (a *v1.Error typed as
// client_golang types it, so ErrorReason reads them alike), warnings
// logged, results that are not an instant vector refused, answers past
// max_response_bytes or max_series_per_query refused, and at most
// maxDecoding answers read and decoded at once.
func NewRouteQueryFunc(cfg config.PrometheusConfig, timeout time.Duration, logger *slog.Logger) (RouteQueryFunc, error) {
	rt, err := newTransport(cfg)
	if err != nil {
		return nil, err
	}
	return routeQueryFunc(cfg.URL, rt, timeout, cfg.MaxSeriesPerQuery, logger)
}

// routeQueryFunc is NewRouteQueryFunc over the round tripper rt, which
// carries the decode slots (slotBodies).
func routeQueryFunc(address string, rt http.RoundTripper, timeout time.Duration, maxSeries int, logger *slog.Logger) (RouteQueryFunc, error) {
	u, err := url.Parse(address)
	if err != nil {
		return nil, fmt.Errorf("prometheus.url %s: %w", config.RedactURL(address), config.RedactError(err))
	}
	u.Path = path.Join(u.Path, "/api/v1/query")
	client := &http.Client{Transport: rt}
	server := ServerTimeout(timeout)
	slots := make(chan struct{}, maxDecoding)
	return func(ctx context.Context, q string, t time.Time, into *Answer) error {
		args := url.Values{"query": {q}, "time": {formatTime(t)}}
		if server > 0 {
			args.Set("timeout", server.String())
		}
		ctx, slot := withDecodeSlot(ctx, slots)
		defer slot.release()
		resp, err := postForm(ctx, client, *u, args)
		if err != nil {
			return contextError(ctx, err)
		}
		defer closeBody(resp.Body)
		env, err := readAnswer(resp, maxSeries, into.addBytes)
		if len(env.warnings) > 0 && logger != nil {
			logger.Warn("query warnings", "query", q, "warnings", env.warnings)
		}
		if err != nil {
			return contextError(ctx, err)
		}
		return nil
	}, nil
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
			return env, &v1.Error{Type: v1.ErrBadResponse, Msg: "inconsistent body for response code"}
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
	case err != nil:
		return env, &v1.Error{Type: v1.ErrBadResponse, Msg: err.Error()}
	case env.status == "error":
		return env, &v1.Error{Type: v1.ErrorType(env.errorType), Msg: env.errorMsg}
	case env.resultType != "vector":
		got := env.resultType
		if got == "" {
			got = "nothing"
		}
		return env, fmt.Errorf("query must return an instant vector, got %s", got)
	case env.floatless:
		return env, &v1.Error{Type: v1.ErrBadResponse, Msg: "a series without a float value (a native histogram?): signal queries must return floats"}
	case maxSeries > 0 && env.series > maxSeries:
		return env, &TooManySeriesError{Series: env.series, Max: maxSeries}
	}
	return env, nil
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
