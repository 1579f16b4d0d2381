package persist_test

import (
	"context"
	"fmt"
	"log/slog"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/promapi"
	"github.com/hermes-failover/hermes/rules/config"
	"github.com/hermes-failover/hermes/runner/persist"
)

// replica serves the series one Hermes replica exports.
func replica(t *testing.T, score, level float64, free int) string {
	return replicaOf(t, persist.MetricRouteTrafficRatio, 100, score, level, free)
}

// replicaOf serves the series of a replica that exports the split as
// traffic (free / per, paid the rest).
func replicaOf(t *testing.T, traffic string, per, score, level float64, free int) string {
	reg := prometheus.NewRegistry()
	g := func(name string, labels ...string) *prometheus.GaugeVec {
		v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: name}, labels)
		reg.MustRegister(v)
		return v
	}
	g(persist.MetricRouteScore, "route").WithLabelValues("free").Set(score)
	g(persist.MetricRouteLevel, "route").WithLabelValues("free").Set(level)
	tp := g(traffic, "service", "route")
	tp.WithLabelValues("chat", "free").Set(float64(free) / per)
	tp.WithLabelValues("chat", "paid").Set(float64(100-free) / per)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	t.Cleanup(srv.Close)
	u, _ := url.Parse(srv.URL)
	return u.Host
}

// TestHistoryFromPrometheus: a real Prometheus scrapes two replicas; the
// history holds one tick per step with the highest of their values.
func TestHistoryFromPrometheus(t *testing.T) {
	a, b := replica(t, 40, 3, 0), replica(t, 30, 2, 50)
	cfg := fmt.Sprintf("global: {scrape_interval: 1s}\nscrape_configs:\n  - job_name: hermes\n    static_configs: [{targets: ['%s', '%s']}]\n", a, b)
	prom := testenv.StartTSDB(t, testenv.Prometheus, cfg, "")
	start := time.Now().Truncate(time.Second)
	var ticks []evaluator.Tick
	testenv.EventuallyDetail(t, 60*time.Second, "five ticks of history", func() (bool, string) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var err error
		ticks, err = persist.History(ctx, prom.API, start, time.Now(), time.Second, persist.RestoreOptions{Selector: `job="hermes"`})
		return err == nil && len(ticks) >= 5, fmt.Sprintf("%d ticks, %v", len(ticks), err)
	})
	for _, tk := range ticks {
		if tk.Routes["free"].Score == 0 {
			continue // one replica scraped, not yet the other
		}
		if tk.Time.Before(start) || tk.Time.Truncate(time.Second) != tk.Time {
			t.Errorf("tick at %s, want whole seconds from %s", tk.Time, start)
		}
	}
	last := ticks[len(ticks)-1]
	if rt := last.Routes["free"]; rt.Score != 40 || rt.Level != "failover" || last.Splits["chat"]["free"] != 50 || last.Splits["chat"]["paid"] != 100 {
		t.Errorf("last tick %+v: want the highest of both replicas (score 40, failover, free 50, paid 100)", last)
	}
	if _, err := persist.History(context.Background(), prom.API, start, time.Now(), time.Second, persist.RestoreOptions{Selector: `job=~"("`}); err == nil {
		t.Error("a bad selector: no error")
	}
}

// TestLegacyPercentSeries: a Hermes from before the 0–1 ratios exported
// hermes_route_traffic_percent; after an upgrade in the middle of an
// incident, the charts and the restore read its split from that series.
func TestLegacyPercentSeries(t *testing.T) {
	old := replicaOf(t, persist.LegacyRouteTrafficPercent, 1, 30, 3, 20)
	cfg := fmt.Sprintf("global: {scrape_interval: 1s}\nscrape_configs:\n  - job_name: hermes\n    static_configs: [{targets: ['%s']}]\n", old)
	prom := testenv.StartTSDB(t, testenv.Prometheus, cfg, "")
	opt := persist.RestoreOptions{Selector: `job="hermes"`}
	start := time.Now().Truncate(time.Second)
	testenv.EventuallyDetail(t, 60*time.Second, "the legacy split in the history", func() (bool, string) {
		ticks, err := persist.History(context.Background(), prom.API, start, time.Now(), time.Second, opt)
		if err != nil || len(ticks) == 0 {
			return false, fmt.Sprint(err)
		}
		last := ticks[len(ticks)-1]
		return last.Splits["chat"]["free"] == 20 && last.Splits["chat"]["paid"] == 80, fmt.Sprint(last.Splits)
	})
	pol := testenv.Policy(t, testenv.HardFailScoring+`
levels:
  - {name: warm, below: 85, recover_above: 90, dwell: 1m, recover_for: 5m, cooldown: 5m, primary_percent: 95}
  - {name: shed, below: 75, recover_above: 82, dwell: 1m, recover_for: 5m, cooldown: 5m, primary_percent: 50}
  - {name: failover, below: 60, recover_above: 80, dwell: 2m, recover_for: 10m, cooldown: 10m, primary_percent: 0}
failback: {stages: [10, 50, 100], observe: 15m, min_score: 80, max_completed: 1, window: 1d, manual_after: 30m}
services: [{name: chat, routes: [free, paid]}]
`)
	client, err := promapi.New(config.PrometheusConfig{URL: prom.URL}, 5*time.Second, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	query := client.Query
	st, report, err := persist.Restore(context.Background(), query, pol, time.Now(), opt)
	if err != nil {
		t.Fatal(err)
	}
	if chat := st.Services["chat"]; chat == nil || chat.Weights["free"] != 20 || chat.Weights["paid"] != 80 {
		t.Errorf("restored split %+v from the legacy series; report %q", st.Services["chat"], report)
	}
}
