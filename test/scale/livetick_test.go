package scale_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/runner"
	"github.com/hermes-failover/hermes/traffic"
)

// TestAtScaleLiveTick runs the live runner with the at-scale policy over a
// fleet against a real Prometheus evaluating the shipped recording rules
// over the fleet's series, with the shipped 15 s ticks and 10 s query
// timeout. Its ticks must end with no signal in error and every route
// judged: normal, nothing missing. The history is a few minutes: the
// hour-long baselines fall back to the last hour as they do after the
// rules are first loaded; TestPrometheusCPUPerTick runs with two hours.
//
// The fleet has 1,000 routes, one to two minutes on this project's machine
// (the hour-long baselines' group runs every minute, so its first round
// comes up to a minute after the rules are loaded);
// HERMES_SCALE_ROUTES=10000 (scripts/bench-prometheus.sh) runs the
// 10,000-route check, which takes three to four minutes. It logs each
// rule group's last round against its interval and the samples its rules
// read: whether the records keep up, and their work whatever the load.
func TestAtScaleLiveTick(t *testing.T) {
	routes := envInt(t, "HERMES_SCALE_ROUTES", 1000)
	e := startEnv(t, routes, 6*time.Minute)
	e.loadRecordingRules(t)
	path, cfg := e.fleetConfig(t, atScalePolicy)

	reg := prometheus.NewRegistry()
	r, err := runner.New(runner.Options{ConfigPath: path, Registerer: reg, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	cpu, start := e.cpuSeconds(t), time.Now()
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx) }()
	deadline := time.Now().Add(3 * time.Minute)
	for testenv.Metric(t, reg, "hermes_ticks_total", nil) < 2 {
		if time.Now().After(deadline) {
			cancel()
			t.Fatalf("fewer than 2 ticks in 3m")
		}
		e.next(t) // the fleet's series go on, as scrapes would
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	t.Logf("Prometheus CPU while Hermes ticked: %.2f s per 15 s (fleet writes, rule groups and queries)",
		(e.cpuSeconds(t)-cpu)/time.Since(start).Seconds()*15)
	e.logRuleGroups(t)

	if n, by := sum(t, reg, "hermes_query_errors_total"); n != 0 {
		t.Errorf("%g signal query errors over %d routes, want none: %s", n, routes, by)
	}
	if d := testenv.Metric(t, reg, "hermes_tick_duration_seconds", nil); d < 0 {
		t.Error("no tick duration observed")
	}
	v := r.View()
	judged := 0
	for _, svc := range v.Config.Services {
		for _, name := range svc.Routes {
			rs := v.State.Routes[name]
			if rs == nil || rs.Level != traffic.Normal || len(rs.Score.Missing) > 0 {
				t.Errorf("route %s: state %+v; want normal with every signal", name, rs)
				if judged++; judged > 5 {
					t.FailNow()
				}
				continue
			}
			judged++
		}
	}
	if judged != routes {
		t.Errorf("%d routes judged, want %d", judged, routes)
	}
	if !t.Failed() {
		t.Logf("%d routes, %d signals: %d queries per tick, no signal in error", routes, len(cfg.Signals), len(cfg.Queries()))
	}
}

// sum adds every series of the metric family name in g, and lists them.
func sum(t *testing.T, g prometheus.Gatherer, name string) (float64, string) {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	total, list := 0.0, []string{}
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			v := m.GetCounter().GetValue() + m.GetGauge().GetValue()
			total += v
			var ls []string
			for _, lp := range m.GetLabel() {
				ls = append(ls, lp.GetName()+"="+lp.GetValue())
			}
			list = append(list, fmt.Sprintf("{%s} %g", strings.Join(ls, ","), v))
		}
	}
	return total, strings.Join(list, "; ")
}

// envInt reads an integer from the environment variable name, def when unset.
func envInt(t *testing.T, name string, def int) int {
	t.Helper()
	s := os.Getenv(name)
	if s == "" {
		return def
	}
	n, err := strconv.Atoi(s)
	if err != nil || n <= 0 {
		t.Fatalf("%s=%q: want a positive integer", name, s)
	}
	return n
}
