package promapi

import (
	"github.com/prometheus/common/model"

	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/rules/config"
)

// prometheusStub answers /api/v1/query like Prometheus would, by query text.
func prometheusStub(t *testing.T) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := r.ParseForm(); err != nil {
			t.Error(err)
		}
		q := r.Form.Get("query")
		if got := r.Form.Get("timeout"); got == "" {
			t.Errorf("query %q sent without a server-side timeout", q)
		}
		w.Header().Set("Content-Type", "application/json")
		switch q {
		case "vector":
			w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[{"metric":{"route":"free"},"value":[1000,"0.25"]}]}}`))
		case "matrix":
			w.Write([]byte(`{"status":"success","data":{"resultType":"matrix","result":[]}}`))
		case "scalar":
			w.Write([]byte(`{"status":"success","data":{"resultType":"scalar","result":[1000,"1"]}}`))
		case "bad":
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"status":"error","errorType":"bad_data","error":"parse error"}`))
		case "slow":
			w.WriteHeader(http.StatusServiceUnavailable)
			w.Write([]byte(`{"status":"error","errorType":"timeout","error":"query timed out in expression evaluation"}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestQueryFunc(t *testing.T) {
	srv := prometheusStub(t)
	api, err := NewAPI(config.PrometheusConfig{URL: srv.URL})
	if err != nil {
		t.Fatal(err)
	}
	q := NewQueryFunc(api, time.Second, 0, nil)
	vec, err := q(context.Background(), "vector", time.Unix(1000, 0))
	if err != nil || len(vec) != 1 || vec[0].Value != 0.25 || vec[0].Metric["route"] != "free" {
		t.Fatalf("vector: %v %v", vec, err)
	}
	for query, want := range map[string]string{
		"matrix": "instant vector, got matrix",
		"scalar": "instant vector, got scalar",
	} {
		if _, err := q(context.Background(), query, time.Unix(1000, 0)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", query, err, want)
		}
	}
	for query, reason := range map[string]string{"bad": "bad_data", "slow": "timeout"} {
		_, err := q(context.Background(), query, time.Unix(1000, 0))
		if got := ErrorReason(err); got != reason {
			t.Errorf("%s: reason %q (%v), want %q", query, got, err, reason)
		}
	}
}

func TestNewAPIRejectsBadHTTPConfig(t *testing.T) {
	var cfg config.PrometheusConfig
	cfg.URL = "http://127.0.0.1:9090"
	cfg.HTTPClient.TLSConfig.CAFile = "/does/not/exist.pem"
	if _, err := NewAPI(cfg); err == nil || !strings.Contains(err.Error(), "http_config") {
		t.Errorf("want an http_config error, got %v", err)
	}
}

func TestServerTimeoutIsAcceptedByPrometheus(t *testing.T) {
	for _, c := range []struct {
		client time.Duration
		want   string
	}{
		{4 * time.Second, "3s"}, {10 * time.Second, "9s"}, {5 * time.Second, "4s"},
		{1500 * time.Millisecond, "1s"}, {800 * time.Millisecond, "720ms"}, {time.Second, "900ms"},
	} {
		got := ServerTimeout(c.client)
		if got.String() != c.want {
			t.Errorf("ServerTimeout(%s) = %s, want %s", c.client, got, c.want)
		}
		// What Prometheus does with the parameter: a float number of
		// seconds, else its own duration notation (no fractions).
		if _, err := model.ParseDuration(got.String()); err != nil {
			t.Errorf("ServerTimeout(%s) = %q, which Prometheus refuses: %v", c.client, got, err)
		}
	}
}
