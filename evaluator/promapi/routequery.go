package promapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
)

// NewRouteQueryFunc returns a RouteQueryFunc over c's /api/v1/query, the
// tick's path: each answer is decoded series by series straight into its
// Answer (decodeAnswer), never as a model.Vector. It behaves as
// NewQueryFunc over v1.NewAPI(c): the same server-side timeout, the same
// errors (a *v1.Error typed as client_golang types it, so ErrorReason
// reads them alike), warnings logged, results that are not an instant
// vector refused, answers of more than maxSeries series a
// TooManySeriesError (0: no bound), and with a c from NewClient at most
// maxDecoding answers read and decoded at once.
func NewRouteQueryFunc(c api.Client, timeout time.Duration, maxSeries int, logger *slog.Logger) RouteQueryFunc {
	server := ServerTimeout(timeout)
	slots := make(chan struct{}, maxDecoding)
	return func(ctx context.Context, q string, t time.Time, into *Answer) error {
		args := url.Values{"query": {q}, "time": {formatTime(t)}}
		if server > 0 {
			args.Set("timeout", server.String())
		}
		ctx, slot := withDecodeSlot(ctx, slots)
		defer slot.release()
		resp, body, err := postForm(ctx, c, args)
		if err != nil {
			return err
		}
		env, err := readAnswer(resp, body, maxSeries, into.Add)
		if len(env.warnings) > 0 && logger != nil {
			logger.Warn("query warnings", "query", q, "warnings", env.warnings)
		}
		return err
	}
}

// postForm sends args to the query endpoint, by POST and, where the
// server refuses POST (403, 405, 501), by GET, as client_golang does.
func postForm(ctx context.Context, c api.Client, args url.Values) (*http.Response, []byte, error) {
	u := c.URL("/api/v1/query", nil)
	encoded := args.Encode()
	req, err := http.NewRequest(http.MethodPost, u.String(), strings.NewReader(encoded))
	if err != nil {
		return nil, nil, fmt.Errorf("building the query request: %w", err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header["Idempotency-Key"] = nil // retried on network errors, like a GET
	resp, body, err := c.Do(ctx, req)
	if resp == nil || (resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusMethodNotAllowed && resp.StatusCode != http.StatusNotImplemented) {
		return resp, body, err
	}
	u.RawQuery = encoded
	if req, err = http.NewRequest(http.MethodGet, u.String(), nil); err != nil {
		return nil, nil, fmt.Errorf("building the query request: %w", err)
	}
	return c.Do(ctx, req)
}

// readAnswer turns an HTTP answer of the query endpoint into series handed
// to each, or the error client_golang's v1 API would return for it.
func readAnswer(resp *http.Response, body []byte, maxSeries int, each func(route, part string, v float64)) (envelope, error) {
	code := resp.StatusCode
	if code/100 != 2 {
		if code != http.StatusBadRequest && code != http.StatusUnprocessableEntity {
			typ, msg := httpErrorType(code)
			return envelope{}, &v1.Error{Type: typ, Msg: msg, Detail: string(body)}
		}
		env, err := decodeAnswer(body, 0, nil)
		switch {
		case err != nil:
			typ, msg := httpErrorType(code)
			return envelope{}, &v1.Error{Type: typ, Msg: msg, Detail: string(body)}
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
	env, err := decodeAnswer(body, maxSeries, each)
	switch {
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
