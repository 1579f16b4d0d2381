package probe

import (
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the prober's series.
type metrics struct {
	success   *prometheus.GaugeVec
	duration  *prometheus.GaugeVec
	verdicts  *prometheus.CounterVec
	results   *prometheus.CounterVec
	tokens    *prometheus.CounterVec
	remaining *prometheus.GaugeVec
	paused    *prometheus.GaugeVec
	ttft      *prometheus.GaugeVec
	panics    *prometheus.CounterVec
}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		success: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "llm_probe_success",
			Help: "Whether the probe succeeds (1) or has failed failure_threshold times in a row (0).",
		}, []string{"route", "probe", "layer"}),
		duration: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "llm_probe_duration_seconds",
			Help: "How long the last run of the probe took.",
		}, []string{"route", "probe", "layer"}),
		verdicts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llm_probe_verdict_total",
			Help: "Probe runs by verdict and soft-failure reason.",
		}, []string{"route", "probe", "verdict", "reason"}),
		results: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llm_probe_results_total",
			Help: "Probe results, each counted once whatever failure_threshold says, by verdict (ok, soft_fail, hard_fail) and reason.",
		}, []string{"route", "layer", "probe", "verdict", "reason"}),
		tokens: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llm_probe_tokens_total",
			Help: "Tokens spent by probes (reported usage, or estimated from characters; the reply's part at most max_tokens, or 4096 without it, the prompt's at most its bytes).",
		}, []string{"route", "probe"}),
		remaining: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "llm_probe_budget_remaining_tokens",
			Help: "Tokens left in the route's current budget window.",
		}, []string{"route"}),
		paused: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "llm_probe_paused",
			Help: "1 while the route's e2e and boundary probes are paused because its token budget is spent.",
		}, []string{"route"}),
	}
	m.ttft = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "llm_probe_time_to_first_token_seconds",
		Help: "Time to the first token of the last run of a streamed probe.",
	}, []string{"route", "probe", "layer"})
	m.panics = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "llm_probe_panics_total",
		Help: "Probe runs that panicked (a bug in Hermes, the first logged with its stack): no result recorded.",
	}, []string{"route", "layer"})
	for _, c := range []prometheus.Collector{m.success, m.duration, m.verdicts, m.results, m.tokens, m.remaining, m.paused, m.ttft, m.panics} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering probe metrics: %w", err)
		}
	}
	return m, nil
}
