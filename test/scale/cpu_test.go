package scale_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/promapi"
	"github.com/hermes-failover/hermes/rules/config"
)

// TestPrometheusCPUPerTick measures what one tick of each policy costs the
// Prometheus it queries, at 1,000 and 10,000 routes (HERMES_SCALE_ROUTES,
// comma-separated, to change), over two hours of the fleet's history. It
// runs only with HERMES_BENCH_PROMETHEUS=1 (scripts/bench-prometheus.sh):
// it takes minutes and its figures are measurements, not assertions.
//
// Per route count, in phases of HERMES_BENCH_TICKS 15 s ticks (default 4),
// the series being written every 15 s throughout:
//
//   - ingest: nothing else, the Prometheus's baseline;
//   - default: each tick, rules/hermes.yaml's queries (promapi.Collector);
//   - at-scale: the shipped recording rules loaded (their groups every 15 s)
//     and each tick rules/hermes-at-scale.yaml's queries.
//
// The CPU of a phase is the increase of the Prometheus's
// process_cpu_seconds_total over its tick intervals, per tick, minus the
// ingest phase's; the at-scale figure includes the recording rules'
// evaluation.
func TestPrometheusCPUPerTick(t *testing.T) {
	if os.Getenv("HERMES_BENCH_PROMETHEUS") != "1" {
		t.Skip("a benchmark of minutes: HERMES_BENCH_PROMETHEUS=1 (scripts/bench-prometheus.sh) runs it")
	}
	counts := []int{1000, 10000}
	if s := os.Getenv("HERMES_SCALE_ROUTES"); s != "" {
		counts = nil
		for f := range strings.SplitSeq(s, ",") {
			var n int
			if _, err := fmt.Sscan(f, &n); err != nil || n <= 0 {
				t.Fatalf("HERMES_SCALE_ROUTES=%q: want positive integers", s)
			}
			counts = append(counts, n)
		}
	}
	ticks := envInt(t, "HERMES_BENCH_TICKS", 4)
	var table []string
	for _, routes := range counts {
		t.Run(fmt.Sprint(routes), func(t *testing.T) {
			table = append(table, measure(t, routes, ticks)...)
		})
	}
	t.Logf("Prometheus CPU per 15 s tick (load average %s):\n%s\n%s",
		loadAverage(), "| routes | policy | queries | Prometheus CPU per tick | slowest tick (all queries) | routes × signals in error |\n|---|---|---|---|---|---|",
		strings.Join(table, "\n"))
}

// phase is what one measured phase saw.
type phase struct {
	cpu     float64 // Prometheus CPU seconds per tick
	slowest time.Duration
	errors  int // (route, signal) samples in error, over all ticks
}

// measure runs the three phases at routes routes and returns two table rows.
func measure(t *testing.T, routes, ticks int) []string {
	e := startEnv(t, routes, 2*time.Hour+10*time.Minute)
	_, def := e.fleetConfig(t, defaultPolicy)
	_, at := e.fleetConfig(t, atScalePolicy)

	ingest := e.run(t, nil, ticks)
	t.Logf("ingest: %.3f s CPU per tick", ingest.cpu)
	d := e.run(t, def, ticks)
	e.loadRecordingRules(t)
	e.next(t) // one more evaluation of every group before measuring
	a := e.run(t, at, ticks)
	e.logRuleGroups(t)
	row := func(name string, cfg *config.Config, p phase) string {
		return fmt.Sprintf("| %d | %s | %d | %.2f s | %s | %d |", routes, name, len(cfg.Queries()), p.cpu-ingest.cpu, p.slowest.Round(10*time.Millisecond), p.errors)
	}
	return []string{row("default (rules/hermes.yaml)", def, d), row("at scale (rules/hermes-at-scale.yaml + recording rules)", at, a)}
}

// run writes ticks ticks of the fleet and, when cfg is set, runs its
// queries at each as a live tick does (a promapi.Collector over the HTTP API,
// the configured query_timeout), and returns the phase's figures.
func (e *env) run(t *testing.T, cfg *config.Config, ticks int) phase {
	t.Helper()
	var p phase
	var query promapi.RouteQueryFunc
	var collector promapi.Collector
	var routes []string
	if cfg != nil {
		client, err := promapi.New(cfg.Prometheus, cfg.Global.QueryTimeout, nil)
		if err != nil {
			t.Fatal(err)
		}
		query = client.QueryRoutes
		for _, svc := range cfg.Services {
			routes = append(routes, svc.Routes...)
		}
	}
	e.next(t) // start on a boundary
	before := e.cpuSeconds(t)
	for range ticks {
		at := e.next(t)
		if query == nil {
			continue
		}
		start := time.Now()
		snap := collector.Collect(context.Background(), query, cfg.Signals, routes, at, cfg.Global.QueryTimeout)
		p.slowest = max(p.slowest, time.Since(start))
		for _, r := range routes {
			for _, s := range cfg.Signals {
				if snap.Get(r, s.Name).Status == evaluator.StatusError {
					p.errors++
				}
			}
		}
	}
	// From just after one boundary's write to just after the last tick's
	// queries: ticks intervals, each with one write, one evaluation of
	// every rule group (when loaded) and one tick's queries.
	p.cpu = (e.cpuSeconds(t) - before) / float64(ticks)
	return p
}

// loadAverage is the machine's 1, 5 and 15 minute load averages.
func loadAverage() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(data))
	return strings.Join(f[:min(3, len(f))], " ")
}
