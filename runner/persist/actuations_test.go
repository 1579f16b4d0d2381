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

// TestActuationsFromPrometheus: a real Prometheus scrapes the actuator
// series of a Hermes whose file actuator moves chat off free, then fails;
// the actuations read back are one apply and one failure at the times
// they happened (not at a step's), not one per sample.
func TestActuationsFromPrometheus(t *testing.T) {
	reg := prometheus.NewRegistry()
	held := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: persist.MetricActuatorTrafficRatio, Help: "h"}, []string{"actuator", "service", "route"})
	changed := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: persist.MetricActuatorChanged, Help: "c"}, []string{"actuator", "service"})
	failing := prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: persist.MetricActuatorFailingSince, Help: "f"}, []string{"actuator"})
	reg.MustRegister(held, changed, failing)
	set := func(free, paid int) {
		held.WithLabelValues("file", "chat", "free").Set(float64(free) / 100)
		held.WithLabelValues("file", "chat", "paid").Set(float64(paid) / 100)
	}
	set(100, 0)
	failing.WithLabelValues("file").Set(0)
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	defer srv.Close()
	u, _ := url.Parse(srv.URL)
	prom := testenv.StartTSDB(t, testenv.Prometheus,
		fmt.Sprintf("global: {scrape_interval: 1s}\nscrape_configs:\n  - job_name: hermes\n    static_configs: [{targets: ['%s']}]\n", u.Host), "")
	opt := persist.RestoreOptions{Selector: `job="hermes"`}
	start := time.Now().Truncate(time.Second)
	read := func() ([]evaluator.Actuation, bool, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		return persist.Actuations(ctx, prom.API, start, time.Now(), time.Second, opt)
	}
	testenv.EventuallyDetail(t, 60*time.Second, "three samples of the healthy split", func() (bool, string) {
		v, err := prom.QueryValue(`count_over_time(` + persist.MetricActuatorTrafficRatio + `{route="free"}[1m])`)
		return err == nil && v >= 3, fmt.Sprintf("%v %v", v, err)
	})
	if acts, found, err := read(); err != nil || !found || len(acts) != 0 {
		t.Fatalf("an unchanged split: %v, found %v, %v; want no actuation", acts, found, err)
	}

	movedAt := time.Now().Truncate(time.Millisecond)
	set(0, 100)
	changed.WithLabelValues("file", "chat").Set(float64(movedAt.UnixMilli()) / 1e3)
	failedAt := time.Now().Add(2 * time.Second).Truncate(time.Second)
	testenv.Eventually(t, 60*time.Second, "the new split scraped", func() bool {
		v, err := prom.QueryValue(persist.MetricActuatorTrafficRatio + `{route="paid"}`)
		return err == nil && v == 1
	})
	failing.WithLabelValues("file").Set(float64(failedAt.Unix()))
	var acts []evaluator.Actuation
	testenv.EventuallyDetail(t, 60*time.Second, "an apply and a failure read back", func() (bool, string) {
		var err error
		acts, _, err = read()
		return err == nil && len(acts) >= 2, fmt.Sprintf("%v %v", acts, err)
	})
	if len(acts) != 2 {
		t.Fatalf("actuations %v, want one apply and one failure", acts)
	}
	applied, failed := acts[0], acts[1]
	if applied.Result != evaluator.ActuationApplied || applied.Actuator != "file" || applied.Service != "chat" ||
		applied.Weights["free"] != 0 || applied.Weights["paid"] != 100 || !applied.Time.Equal(movedAt.UTC()) {
		t.Errorf("apply read back as %+v, want file applying chat free 0%%, paid 100%% at %s", applied, movedAt.UTC())
	}
	if failed.Result != evaluator.ActuationFailed || failed.Service != "chat" || !failed.Time.Equal(failedAt.UTC()) {
		t.Errorf("failure read back as %+v, want file failing on chat at %s", failed, failedAt)
	}

	if _, found, err := persist.Actuations(context.Background(), prom.API, start, time.Now(), time.Second, persist.RestoreOptions{Selector: `job="elsewhere"`}); err != nil || found {
		t.Errorf("no series for the selector: found %v, %v", found, err)
	}
}
