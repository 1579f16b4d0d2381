package prometheus_test

import (
	"context"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hermes-failover/hermes/internal/testenv"
)

// standIn is a gateway's /metrics for the live test: its own metric names
// and labels, counting calls as the gateway would, four successes to one
// failure, every call taking 0.7s.
type standIn struct {
	rules string  // the mapping's file
	route string  // the route label the mapping gives the counted calls
	p99   float64 // the 1m P99 Prometheus interpolates for calls of 0.7s in its buckets
	// count records one success and one failure on reg's collectors.
	register func(reg prometheus.Registerer) (success, failure func())
}

var standIns = map[string]standIn{
	"litellm": {
		rules: "gateway-litellm.rules.yml",
		route: "free",
		p99:   0.5 + 0.99*(1-0.5), // every call in (0.5, 1]
		register: func(reg prometheus.Registerer) (func(), func()) {
			deployment := []string{"requested_model", "litellm_model_name", "model_id", "api_base", "api_provider", "hashed_api_key", "api_key_alias", "team", "team_alias"}
			values := []string{"chat", "openai/gpt-4o-mini", "free", "http://127.0.0.1:9799/free/v1", "openai", "9e2c4f1a7b", "chat-app", "t-42", "research"}
			// Python's client adds _total to a counter's name; Go's does not.
			ok := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "litellm_deployment_success_responses_total", Help: "successes"}, deployment)
			failed := prometheus.NewCounterVec(prometheus.CounterOpts{Name: "litellm_deployment_failure_responses_total", Help: "failures"},
				append(deployment, "exception_status", "exception_class"))
			latency := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "litellm_llm_api_latency_metric", Help: "latency",
				Buckets: []float64{0.1, 0.5, 1, 1.5, 2}}, []string{"model", "hashed_api_key", "requested_model", "model_id"})
			reg.MustRegister(ok, failed, latency)
			return func() {
					ok.WithLabelValues(values...).Inc()
					latency.WithLabelValues("gpt-4o-mini", "9e2c4f1a7b", "chat", "free").Observe(0.7)
				}, func() {
					failed.WithLabelValues(append(values, "503", "Openai.ServiceUnavailableError")...).Inc()
				}
		},
	},
	"envoy-ai": {
		rules: "gateway-envoy-ai.rules.yml",
		route: "openai:gpt-4o-mini",
		p99:   0.64 + 0.99*(1.28-0.64), // every call, failures too, in (0.64, 1.28]
		register: func(reg prometheus.Registerer) (func(), func()) {
			duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{Name: "gen_ai_server_request_duration_seconds", Help: "duration",
				Buckets: []float64{0.16, 0.32, 0.64, 1.28, 2.56}},
				[]string{"gen_ai_operation_name", "gen_ai_provider_name", "gen_ai_original_model", "gen_ai_request_model", "gen_ai_response_model", "error_type"})
			reg.MustRegister(duration)
			call := func(errorType string) func() {
				// An empty error_type is no label at all once Prometheus ingests it.
				return func() {
					duration.WithLabelValues("chat", "openai", "gpt-4o-mini", "gpt-4o-mini", "gpt-4o-mini-2024-07-18", errorType).Observe(0.7)
				}
			}
			return call(""), call("_OTHER")
		},
	},
}

// TestMappingsLive loads each gateway mapping and the recording rules,
// their groups run every second, into a real Prometheus scraping a
// stand-in for the gateway's /metrics, and waits until hard_fail_ratio
// reads the stand-in's share of failures (0.2), both as the default
// policy's query and as the at-scale policy's record, and the 1m P99
// latency is 0.7s's bucket's: the same rules promtool tests, loaded and
// evaluated by the server a user runs.
func TestMappingsLive(t *testing.T) {
	hardFail := ""
	for _, s := range signals(t, defaultConfig) {
		if s.Name == "hard_fail_ratio" {
			hardFail = s.Query
		}
	}
	if hardFail == "" {
		t.Fatalf("%s has no hard_fail_ratio", defaultConfig)
	}
	for name, si := range standIns {
		t.Run(name, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			success, failure := si.register(reg)
			exporter := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
			t.Cleanup(exporter.Close)
			testenv.Go(t, func(ctx context.Context) {
				tick := time.NewTicker(50 * time.Millisecond)
				defer tick.Stop()
				for {
					select {
					case <-ctx.Done():
						return
					case <-tick.C:
						for range 4 {
							success()
						}
						failure()
					}
				}
			})

			dir := t.TempDir()
			var files []string
			for _, f := range []string{si.rules, recordingRules} {
				data, err := os.ReadFile(f)
				if err != nil {
					t.Fatal(err)
				}
				fast := strings.NewReplacer("interval: 15s", "interval: 1s", "interval: 1m", "interval: 1s").Replace(string(data))
				path := filepath.Join(dir, f)
				if err := os.WriteFile(path, []byte(fast), 0o644); err != nil {
					t.Fatal(err)
				}
				files = append(files, path)
			}
			cfg := fmt.Sprintf("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\nrule_files: [%q, %q]\n"+
				"scrape_configs:\n  - job_name: gateway\n    static_configs: [{targets: [%q]}]\n",
				files[0], files[1], strings.TrimPrefix(exporter.URL, "http://"))
			prom := testenv.StartTSDB(t, testenv.Prometheus, cfg, "")

			queries := map[string]struct {
				q    string
				want float64
			}{
				"hard_fail_ratio (default query)":   {hardFail, 0.2},
				"hard_fail_ratio (at-scale record)": {"route:llm_gateway_hard_fail_ratio:rate1m", 0.2},
				"P99 over 1m (query)":               {"histogram_quantile(0.99, sum by (route, le) (rate(llm_gateway_request_duration_seconds_bucket[1m])))", si.p99},
				"P99 over 1m (record)":              {"route:llm_gateway_request_duration_seconds:p99_1m", si.p99},
			}
			testenv.EventuallyDetail(t, time.Minute, "Hermes's signals read the gateway's own series", func() (bool, string) {
				var detail []string
				for what, q := range queries {
					v, err := routeValue(prom, q.q, si.route)
					if err != nil || math.Abs(v-q.want) > 0.01*q.want {
						detail = append(detail, fmt.Sprintf("%s = %v (%v), want %v", what, v, err, q.want))
					}
				}
				return len(detail) == 0, strings.Join(detail, "; ")
			})
		})
	}
}

// routeValue is the value q gives route, the only series it may give it.
func routeValue(prom *testenv.TSDB, q, route string) (float64, error) {
	vec, err := prom.Query(q)
	if err != nil {
		return 0, err
	}
	var found []float64
	for _, s := range vec {
		if string(s.Metric["route"]) == route {
			found = append(found, float64(s.Value))
		}
	}
	if len(found) != 1 {
		return 0, fmt.Errorf("%d series of route %s in %v", len(found), route, vec)
	}
	return found[0], nil
}
