package promapi

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/rules/config"
)

func TestNewAPIRejectsBadHTTPConfig(t *testing.T) {
	var cfg config.PrometheusConfig
	cfg.URL = "http://127.0.0.1:9090"
	cfg.HTTPClient.TLSConfig.CAFile = "/does/not/exist.pem"
	if _, err := NewAPI(cfg); err == nil || !strings.Contains(err.Error(), "http_config") {
		t.Errorf("NewAPI: want an http_config error, got %v", err)
	}
	if _, err := New(cfg, time.Second, nil); err == nil || !strings.Contains(err.Error(), "http_config") {
		t.Errorf("New: want an http_config error, got %v", err)
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
