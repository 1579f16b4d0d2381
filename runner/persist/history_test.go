package persist_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"net/url"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/runner/persist"
)

// replica serves the series one Hermes replica exports.
func replica(t *testing.T, score, level float64, free int) string {
	reg := prometheus.NewRegistry()
	g := func(name string, labels ...string) *prometheus.GaugeVec {
		v := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: name}, labels)
		reg.MustRegister(v)
		return v
	}
	g(persist.MetricRouteScore, "route").WithLabelValues("free").Set(score)
	g(persist.MetricRouteLevel, "route").WithLabelValues("free").Set(level)
	tp := g(persist.MetricRouteTrafficPercent, "service", "route")
	tp.WithLabelValues("chat", "free").Set(float64(free))
	tp.WithLabelValues("chat", "paid").Set(float64(100 - free))
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
