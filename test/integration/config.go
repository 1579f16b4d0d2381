package integration

import (
	"strings"
	"text/template"
)

// ConfigOptions fill in the test policy.
type ConfigOptions struct {
	// PrometheusURL is where Hermes queries (a Prometheus, VictoriaMetrics
	// or the test proxy).
	PrometheusURL string
	// SplitPath is the file actuator's state file.
	SplitPath string
	// Quality adds the quality_score signal, aggregated by (route, replica)
	// so that a second replica series makes it ambiguous.
	Quality bool
	// QueryTimeout is global.query_timeout (default 800ms).
	QueryTimeout string
	// EvaluationInterval is global.evaluation_interval (default 1s).
	EvaluationInterval string
	// Help is put in every signal's help text; changing it makes a valid
	// but different configuration.
	Help string
	// AlertmanagerURL, when set, adds an alerting section sending the
	// alerts to that Alertmanager, with ExternalURL (Hermes's own URL) as
	// external_url.
	AlertmanagerURL string
	ExternalURL     string
	// Actuators, when set, are the entries of the actuators list (YAML,
	// indented by two spaces, e.g. Nginx.Actuator) instead of the file
	// actuator writing SplitPath.
	Actuators string
}

// The test policy: the default policy's shape with windows and timers of
// seconds. Dwell grows down the levels (1s, 3s, 5s) so that a route whose
// score falls steadily passes warm, then shed, then failover.
var configTemplate = template.Must(template.New("hermes.yaml").Parse(`# Hermes integration test policy.
global:
  evaluation_interval: {{ .EvaluationInterval }}
  query_timeout: {{ .QueryTimeout }}

prometheus:
  url: {{ .PrometheusURL }}

signals:
  - name: soft_fail_ratio
    requires_traffic: true
    help: share of 2xx replies whose content failed validation (15s){{ .Help }}
    query: |
      (sum by (route) (rate(llm_gateway_requests_total{verdict="soft_fail"}[15s]))
        or 0 * sum by (route) (rate(llm_gateway_requests_total[15s])))
      / sum by (route) (rate(llm_gateway_requests_total[15s]))
  - name: hard_fail_ratio
    requires_traffic: true
    help: share of calls that were not 2xx (15s){{ .Help }}
    query: |
      (sum by (route) (rate(llm_gateway_requests_total{verdict="hard_fail"}[15s]))
        or 0 * sum by (route) (rate(llm_gateway_requests_total[15s])))
      / sum by (route) (rate(llm_gateway_requests_total[15s]))
  - name: probe_success
    help: synthetic probe success over 10s{{ .Help }}
    query: avg by (route) (avg_over_time(llm_probe_success[10s]))
{{- if .Quality }}
  - name: quality_score
    help: sampled quality per gateway replica{{ .Help }}
    query: max by (route, replica) (llm_gateway_quality_score)
{{- end }}

scoring:
  penalties:
    - {signal: soft_fail_ratio, above: 0.05, points_per_unit: 300, max: 100}
    - {signal: hard_fail_ratio, above: 0.01, points_per_unit: 400, max: 100}
    - {signal: probe_success, below: 0.95, points_per_unit: 200, max: 100}
{{- if .Quality }}
    - {signal: quality_score, below: 0.8, points_per_unit: 100, max: 30}
{{- end }}
  caps:
    - {signal: hard_fail_ratio, above: 0.2, max_score: 0, immediate: true}
    - {signal: probe_success, below: 0.5, max_score: 40}

levels:
  - {name: warm, below: 85, recover_above: 90, dwell: 1s, recover_for: 3s, cooldown: 3s, primary_percent: 95, retries: true}
  - {name: shed, below: 75, recover_above: 82, dwell: 3s, recover_for: 3s, cooldown: 3s, primary_percent: 50, retries: true}
  - {name: failover, below: 60, recover_above: 80, dwell: 5s, recover_for: 3s, cooldown: 5s, primary_percent: 0, retries: false}

failback:
  stages: [10, 30, 50, 100]
  observe: 3s
  min_score: 80
  max_completed: 1
  window: 24h
  manual_after: 10m

services:
  - name: chat
    routes: [free, paid-standard, paid-premium]

alerts:
  - name: HermesRouteFailedOver
    tier: A
    expr: level == "failover" && stage == 0
    summary: 'Traffic of {{ "{{" }} .Service {{ "}}" }} was failed over away from route {{ "{{" }} .Route {{ "}}" }}.'

{{- if .AlertmanagerURL }}

alerting:
  external_url: {{ .ExternalURL }}
  alertmanagers:
    - url: {{ .AlertmanagerURL }}
{{- end }}

actuators:
{{- if .Actuators }}
{{ .Actuators }}
{{- else }}
  - type: file
    path: {{ .SplitPath }}
{{- end }}
`))

// HermesConfig renders the test policy.
func HermesConfig(o ConfigOptions) string {
	if o.QueryTimeout == "" {
		o.QueryTimeout = "800ms"
	}
	if o.EvaluationInterval == "" {
		o.EvaluationInterval = "1s"
	}
	var b strings.Builder
	if err := configTemplate.Execute(&b, o); err != nil {
		panic(err)
	}
	return b.String()
}
