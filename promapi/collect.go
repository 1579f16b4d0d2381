package promapi

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"
	"time"

	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/labelname"
	"github.com/hermes-failover/hermes/rules"
)

// QueryFunc runs one instant PromQL query at time t: Client.Query, a
// backtest's or a range cache's Query. VectorRoutes adapts it to
// Collector.Collect.
type QueryFunc func(ctx context.Context, q string, t time.Time) (model.Vector, error)

// RouteQueryFunc runs one instant PromQL query at t and adds every series
// of its answer to into (Answer.Add); an error fails the whole answer.
// Client.QueryRoutes is the live ticks'; VectorRoutes adapts a QueryFunc.
// It adds nothing once it has returned: a Collector serves the same
// Answer to the query's next tick.
type RouteQueryFunc func(ctx context.Context, q string, t time.Time, into *Answer) error

// VectorRoutes adapts a QueryFunc (a backtest, a fake) to a
// RouteQueryFunc: the series of its vector are added one by one.
func VectorRoutes(query QueryFunc) RouteQueryFunc {
	return func(ctx context.Context, q string, t time.Time, into *Answer) error {
		vec, err := query(ctx, q, t)
		if err != nil {
			return err
		}
		for _, s := range vec {
			if r, ok := s.Metric[labelname.Route]; ok {
				into.Add(string(r), string(s.Metric[rules.PartLabel]), float64(s.Value))
			}
		}
		return nil
	}
}

// Reasons ErrorReason gives of its own (besides a Prometheus errorType
// and free text): values of hermes_query_errors_total's reason label,
// which the status page reads too.
const (
	ReasonTimeout          = "timeout"
	ReasonCanceled         = "canceled"
	ReasonConnection       = "connection"
	ReasonResponseTooLarge = "response_too_large"
	ReasonTooManySeries    = "too_many_series"
	// ReasonOther is an errorType that Prometheus's API does not give.
	ReasonOther = "other"
)

// maxReasonLen bounds the free-text reason of an unclassified error.
const maxReasonLen = 80

// ErrorReason classifies a query error into a short reason: "timeout" for
// deadlines and query timeouts, "canceled", the type of a client_golang
// *v1.Error ("bad_data", "execution", "server_error", ...; for a non-JSON
// HTTP error the errorType found in its body wins, so a Prometheus timeout
// answered with 503 is "timeout"), "response_too_large" and
// "too_many_series" for answers past the configured bounds, "connection"
// for network failures, and
// otherwise the error's first line, cut to 80 characters.
func ErrorReason(err error) string {
	if err == nil {
		return ""
	}
	var apiErr *v1.Error
	var netErr net.Error
	var series *TooManySeriesError
	switch {
	case errors.Is(err, ErrResponseTooLarge):
		return ReasonResponseTooLarge
	case errors.As(err, &series):
		return ReasonTooManySeries
	case errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &netErr) && netErr.Timeout():
		return ReasonTimeout
	case errors.Is(err, context.Canceled):
		return ReasonCanceled
	case errors.As(err, &apiErr):
		return apiErrorReason(apiErr)
	case isConnectionError(err):
		return ReasonConnection
	case strings.Contains(err.Error(), "query timed out"):
		return ReasonTimeout
	}
	return shortText(err.Error())
}

// ErrorDetail says in a few words what went wrong with a query, for
// people: the bound an answer passed (ErrResponseTooLarge), the cause a
// connection failed with ("connection refused", "no such host",
// "connection reset by peer"), else the message of a Prometheus API
// error, else the error's first line, cut to 80 characters. Both of
// Client's paths give the same detail for the same failure
// (TestQueryContract). ErrorReason is the short class (a metric label); this is
// the detail beside it.
func ErrorDetail(err error) string {
	if err == nil {
		return ""
	}
	var errno syscall.Errno
	var dnsErr *net.DNSError
	var apiErr *v1.Error
	switch {
	case errors.Is(err, ErrResponseTooLarge):
		return ErrResponseTooLarge.Error()
	case errors.As(err, &dnsErr):
		return shortText(dnsErr.Err)
	case errors.As(err, &errno):
		return shortText(errno.Error())
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return "connection closed before the answer"
	case errors.Is(err, context.DeadlineExceeded):
		return "no answer within the query timeout"
	case errors.As(err, &apiErr) && apiErr.Msg != "":
		return shortText(apiErr.Msg)
	}
	return shortText(err.Error())
}

// apiErrorReason names a Prometheus API error by its type. client_golang
// decodes the JSON error body only for 400 and 422, so for other status codes
// the errorType is read from the body kept in Detail.
func apiErrorReason(e *v1.Error) string {
	typ := string(e.Type)
	if e.Detail != "" {
		var body struct {
			ErrorType string `json:"errorType"`
		}
		if json.Unmarshal([]byte(e.Detail), &body) == nil && body.ErrorType != "" {
			typ = body.ErrorType
		}
	}
	switch {
	case typ == "":
		return shortText(e.Msg)
	case !knownErrorTypes[typ]:
		// A label value: a server's free text would make a new series
		// per answer.
		return ReasonOther
	}
	return typ
}

// knownErrorTypes are the errorType values Prometheus's API and
// client_golang give; any other is reported as "other".
var knownErrorTypes = map[string]bool{
	"timeout": true, "canceled": true, "execution": true, "bad_data": true,
	"internal": true, "unavailable": true, "not_found": true, "not_acceptable": true,
	string(v1.ErrBadResponse): true, string(v1.ErrServer): true, string(v1.ErrClient): true,
}

// isConnectionError reports whether err is a failure to reach or keep the server.
func isConnectionError(err error) bool {
	var opErr *net.OpError
	var dnsErr *net.DNSError
	return errors.As(err, &opErr) || errors.As(err, &dnsErr) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// shortText returns the first line of s, cut to maxReasonLen runes.
func shortText(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	s = strings.TrimSpace(s)
	if r := []rune(s); len(r) > maxReasonLen {
		s = string(r[:maxReasonLen-1]) + "…"
	}
	return s
}
