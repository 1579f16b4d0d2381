// Package promapi adapts the Prometheus HTTP API (client_golang's v1.API) to
// the small types the evaluator owns. Any engine that speaks the Prometheus
// query API works: Prometheus, Thanos, Mimir, Cortex, VictoriaMetrics.
package promapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/rules/config"
)

// NewAPI builds a query API client from the prometheus section of the
// configuration (see newTransport), for what Client does not ask: range
// queries (the status page's history, backtests). Close it
// (CloseIdleConnections) when done with it, or its keep-alive connections
// and their goroutines stay until Prometheus closes them.
func NewAPI(cfg config.PrometheusConfig) (*API, error) {
	rt, err := newTransport(cfg)
	if err != nil {
		return nil, err
	}
	a, err := newAPI(cfg.URL, httpClient(rt, cfg.HTTPClient.FollowRedirects))
	if err != nil {
		return nil, err
	}
	return &API{API: a, rt: rt}, nil
}

// API is client_golang's query API over a transport NewAPI built.
type API struct {
	v1.API
	rt http.RoundTripper
}

// CloseIdleConnections closes the connections a kept alive between
// queries.
func (a *API) CloseIdleConnections() {
	if ci, ok := a.rt.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

func newAPI(address string, hc *http.Client) (v1.API, error) {
	client, err := api.NewClient(api.Config{Address: address, Client: hc})
	if err != nil {
		return nil, fmt.Errorf("prometheus.url %s: %w", config.RedactURL(address), config.RedactError(err))
	}
	return v1.NewAPI(client), nil
}

// newTransport builds the round tripper of the query API from the
// prometheus section of the configuration, with its prometheus/common HTTP
// client settings (basic auth, bearer token file, TLS, proxy; never sent
// to another host on a redirect, see config.NewRoundTripper), its bound
// on the size of an answer (max_response_bytes; see ErrResponseTooLarge)
// and its decode slots (see maxDecoding). Client.CloseIdleConnections
// reaches its connections through both wrappers.
func newTransport(cfg config.PrometheusConfig) (http.RoundTripper, error) {
	rt, err := config.NewRoundTripper(cfg.HTTPClient, "hermes")
	if err != nil {
		return nil, fmt.Errorf("prometheus.http_config: %w", err)
	}
	return idleCloser{slotBodies(limitBodies(rt, cfg.MaxResponseBytes)), rt}, nil
}

// idleCloser is a round tripper whose CloseIdleConnections reaches base,
// the transport below its wrappers (which are plain functions).
type idleCloser struct {
	http.RoundTripper
	base http.RoundTripper
}

func (c idleCloser) CloseIdleConnections() {
	if ci, ok := c.base.(interface{ CloseIdleConnections() }); ok {
		ci.CloseIdleConnections()
	}
}

// CloseIdleConnections closes the connections c keeps alive between
// queries. A client no longer used (a reload replaced it) must be closed
// so, or its connections and their goroutines stay until the server
// closes them.
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// Client runs instant queries against the /api/v1/query endpoint of the
// prometheus section of the configuration, by two paths that keep one
// contract:
//
//   - Query decodes an answer with client_golang into a model.Vector,
//     every label kept: restore and ad-hoc queries, whose answers are
//     small and whose callers read labels other than the route.
//   - QueryRoutes streams an answer series by series into an Answer,
//     keeping only the route, the part and the value (decodeAnswer): the
//     ticks, whose answers at 10,000 routes would be about 5 MB of
//     model.Vector garbage per signal per tick (BenchmarkTickAnswer).
//
// Both go through one transport (the same HTTP client settings, size
// bound and connections), send the same request (POST, GET where the
// server refuses it; the same time and server-side timeout), share one
// bound on the answers decoded at once (maxDecoding), log warnings alike,
// refuse what is not an instant vector of floats and answers past
// max_series_per_query alike (checkAnswer), and fail with errors that
// ErrorReason and ErrorDetail read alike. TestQueryContract runs every
// case against both and requires the same outcome.
type Client struct {
	api       v1.API
	http      *http.Client
	endpoint  url.URL
	server    time.Duration // the server-side timeout; 0: none
	maxSeries int
	slots     chan struct{}
	logger    *slog.Logger
}

// New builds a Client from the prometheus section of the configuration.
// Each query's client deadline is the caller's (Collector.Collect sets
// query_timeout); timeout sets the server-side one a little under it
// (ServerTimeout), so Prometheus answers with its own error before the
// client gives up. A nil logger drops warnings.
func New(cfg config.PrometheusConfig, timeout time.Duration, logger *slog.Logger) (*Client, error) {
	rt, err := newTransport(cfg)
	if err != nil {
		return nil, err
	}
	return newClient(cfg.URL, httpClient(rt, cfg.HTTPClient.FollowRedirects), timeout, cfg.MaxSeriesPerQuery, logger)
}

// httpClient is an http.Client over rt that follows redirects only when
// follow (http_config's follow_redirects) says so. client_golang's own
// client followed them whatever the setting.
func httpClient(rt http.RoundTripper, follow bool) *http.Client {
	hc := &http.Client{Transport: rt}
	if !follow {
		hc.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	return hc
}

// newClient is New over hc, whose round tripper carries the decode slots
// (slotBodies).
func newClient(address string, hc *http.Client, timeout time.Duration, maxSeries int, logger *slog.Logger) (*Client, error) {
	a, err := newAPI(address, hc)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(address)
	if err != nil {
		return nil, fmt.Errorf("prometheus.url %s: %w", config.RedactURL(address), config.RedactError(err))
	}
	u.Path = path.Join(u.Path, "/api/v1/query")
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Client{
		api: a, http: hc, endpoint: *u,
		server: ServerTimeout(timeout), maxSeries: maxSeries,
		slots: make(chan struct{}, maxDecoding), logger: logger,
	}, nil
}

// Query runs q at t and returns its answer as a vector (a QueryFunc),
// through client_golang.
func (c *Client) Query(ctx context.Context, q string, t time.Time) (model.Vector, error) {
	var opts []v1.Option
	if c.server > 0 {
		opts = append(opts, v1.WithTimeout(c.server))
	}
	ctx, slot := withDecodeSlot(ctx, c.slots)
	val, warnings, _, err := c.api.Query(ctx, q, t, opts...)
	slot.release()
	c.warn(q, warnings)
	if err != nil {
		return nil, malformedAnswer(err)
	}
	vec, _ := val.(model.Vector)
	floatless := false
	for _, s := range vec {
		// client_golang decodes a native histogram's sample with a zero
		// Value; the streamed path refuses it (signal queries must return
		// floats), so this one does too.
		floatless = floatless || s.Histogram != nil
	}
	if err := checkAnswer(valueType(val), len(vec), floatless, c.maxSeries); err != nil {
		return nil, err
	}
	return vec, nil
}

// malformedAnswer marks client_golang's error for an answer that is not
// JSON of the query API (a *v1.Error of type bad_response, its Msg the
// JSON decoder's, no Detail) as the streamed path marks its own
// (malformed), so that a person reads the same first words whichever path
// met it. client_golang's other bad_response errors (a body inconsistent
// with its status code; a status code neither 2xx, 4xx nor 5xx) are left
// as they are.
func malformedAnswer(err error) error {
	var e *v1.Error
	if errors.As(err, &e) && e.Type == v1.ErrBadResponse && e.Detail == "" &&
		e.Msg != msgInconsistent && !strings.HasPrefix(e.Msg, "bad response code") {
		return &v1.Error{Type: e.Type, Msg: malformed + e.Msg}
	}
	return err
}

// msgInconsistent is client_golang's message for a body whose status
// disagrees with the HTTP status code; readAnswer gives the same.
const msgInconsistent = "inconsistent body for response code"

// warn logs the warnings of q's answer, one line.
func (c *Client) warn(q string, warnings []string) {
	if len(warnings) > 0 {
		c.logger.Warn("query warnings", "query", q, "warnings", warnings)
	}
}

// checkAnswer is what both paths refuse of an answer Prometheus gave
// without an error: a result that is not an instant vector (resultType),
// a series without a float value (a native histogram), more than
// maxSeries series (0: no bound).
func checkAnswer(resultType string, series int, floatless bool, maxSeries int) error {
	switch {
	case resultType != model.ValVector.String():
		if resultType == "" {
			resultType = "nothing"
		}
		return fmt.Errorf("query must return an instant vector, got %s", resultType)
	case floatless:
		return &v1.Error{Type: v1.ErrBadResponse, Msg: "a series without a float value (a native histogram?): signal queries must return floats"}
	case maxSeries > 0 && series > maxSeries:
		return &TooManySeriesError{Series: series, Max: maxSeries}
	}
	return nil
}

// ServerTimeout is the `timeout` parameter sent with a query whose client
// deadline is timeout: 90 % of it, cut to whole seconds from one second up
// and to whole milliseconds below. client_golang sends it in Go notation,
// and Prometheus (2.x and 3.x) and VictoriaMetrics accept "3s" or "900ms"
// but refuse "3.6s", which would fail every query.
func ServerTimeout(timeout time.Duration) time.Duration {
	d := timeout - timeout/10
	if d >= time.Second {
		return d.Truncate(time.Second)
	}
	return d.Truncate(time.Millisecond)
}

func valueType(v model.Value) string {
	if v == nil {
		return ""
	}
	return v.Type().String()
}
