// Package promapi adapts the Prometheus HTTP API (client_golang's v1.API) to
// the small types the evaluator owns. Any engine that speaks the Prometheus
// query API works: Prometheus, Thanos, Mimir, Cortex, VictoriaMetrics.
package promapi

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	commoncfg "github.com/prometheus/common/config"
	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/rules/config"
)

// NewAPI builds a query API client from the prometheus section of the
// configuration (see newTransport).
func NewAPI(cfg config.PrometheusConfig) (v1.API, error) {
	rt, err := newTransport(cfg)
	if err != nil {
		return nil, err
	}
	client, err := api.NewClient(api.Config{Address: cfg.URL, RoundTripper: rt})
	if err != nil {
		return nil, fmt.Errorf("prometheus.url %s: %w", config.RedactURL(cfg.URL), config.RedactError(err))
	}
	return v1.NewAPI(client), nil
}

// newTransport builds the round tripper of the query API from the
// prometheus section of the configuration, with its prometheus/common HTTP
// client settings (basic auth, bearer token file, TLS, proxy), its bound
// on the size of an answer (max_response_bytes; see ErrResponseTooLarge)
// and its decode slots (see maxDecoding).
func newTransport(cfg config.PrometheusConfig) (http.RoundTripper, error) {
	rt, err := commoncfg.NewRoundTripperFromConfig(cfg.HTTPClient, "hermes")
	if err != nil {
		return nil, fmt.Errorf("prometheus.http_config: %w", err)
	}
	return slotBodies(limitBodies(rt, cfg.MaxResponseBytes)), nil
}

// NewQueryFunc returns a QueryFunc over a. The server-side timeout is set a
// little under timeout so Prometheus answers with its own error before the
// client gives up (see ServerTimeout). Warnings are logged; results that are
// not an instant vector are errors, and so are answers with more than
// maxSeries series (a TooManySeriesError; 0 means no bound). With an a from
// NewAPI, at most maxDecoding answers are read and decoded at once.
func NewQueryFunc(a v1.API, timeout time.Duration, maxSeries int, logger *slog.Logger) QueryFunc {
	server := ServerTimeout(timeout)
	slots := make(chan struct{}, maxDecoding)
	return func(ctx context.Context, q string, t time.Time) (model.Vector, error) {
		var opts []v1.Option
		if server > 0 {
			opts = append(opts, v1.WithTimeout(server))
		}
		ctx, slot := withDecodeSlot(ctx, slots)
		val, warnings, _, err := a.Query(ctx, q, t, opts...)
		slot.release()
		if err != nil {
			return nil, err
		}
		if len(warnings) > 0 && logger != nil {
			logger.Warn("query warnings", "query", q, "warnings", warnings)
		}
		vec, ok := val.(model.Vector)
		if !ok {
			return nil, fmt.Errorf("query must return an instant vector, got %s", valueType(val))
		}
		if maxSeries > 0 && len(vec) > maxSeries {
			return nil, &TooManySeriesError{Series: len(vec), Max: maxSeries}
		}
		return vec, nil
	}
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
		return "nothing"
	}
	return v.Type().String()
}
