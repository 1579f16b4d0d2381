// Package scale_test runs Hermes's queries against a real Prometheus
// holding a fleet of 1,000 or 10,000 routes (internal/promfleet): a live
// tick of the at-scale policy (rules/hermes-at-scale.yaml) must end with
// no signal in error, and, with HERMES_BENCH_PROMETHEUS=1
// (scripts/bench-prometheus.sh), the Prometheus CPU per tick of the
// default and the at-scale policy is measured.
package scale_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/backtest"
	"github.com/hermes-failover/hermes/internal/benchfleet"
	"github.com/hermes-failover/hermes/internal/promfleet"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules/config"
)

const (
	recordingRules = "../../rules/prometheus/hermes-recording.rules.yml"
	defaultPolicy  = "../../rules/hermes.yaml"
	atScalePolicy  = "../../rules/hermes-at-scale.yaml"
)

// env is a Prometheus holding a fleet, with the series written live every
// 15 s from the fleet's last sample on.
type env struct {
	prom  *testenv.TSDB
	fleet *promfleet.Fleet
	rules string // the directory Prometheus loads *.rules.yml from
	// ruleFile is the recording rules loaded (loadRecordingRules).
	ruleFile string
	routes   int
	last     time.Time // the last timestamp written
	history  time.Duration
}

// startEnv starts Prometheus (remote-write receiver and reloads on, no
// scrape job, rule files from an empty directory) and writes history of
// the fleet of routes routes, ending at the last 15 s boundary.
func startEnv(t *testing.T, routes int, history time.Duration) *env {
	t.Helper()
	dir := t.TempDir()
	e := &env{rules: filepath.Join(dir, "rules"), routes: routes, history: history}
	if err := os.Mkdir(e.rules, 0o755); err != nil {
		t.Fatal(err)
	}
	config := "global:\n  evaluation_interval: 15s\nrule_files:\n  - " + e.rules + "/*.rules.yml\n"
	e.prom = testenv.StartTSDB(t, testenv.Prometheus, config, "",
		"--web.enable-remote-write-receiver", "--web.enable-lifecycle")
	e.fleet = promfleet.New(e.prom.URL, routes)
	end := time.Now().Truncate(promfleet.Interval)
	start := time.Now()
	last, err := e.fleet.History(t.Context(), end.Add(-history), end)
	if err != nil {
		t.Fatalf("writing %s of %d routes (%d series): %v", history, routes, e.fleet.Series(), err)
	}
	e.last = last
	t.Logf("%d routes, %d series: %s of history written in %s", routes, e.fleet.Series(), history, time.Since(start).Round(time.Second))
	return e
}

// next waits for the next 15 s boundary after the last sample and writes
// the fleet's samples there, as a scrape would; it returns that time.
func (e *env) next(t *testing.T) time.Time {
	t.Helper()
	at := e.last.Add(promfleet.Interval)
	if wait := time.Until(at); wait > 0 {
		select {
		case <-time.After(wait):
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		}
	}
	if err := e.fleet.Tick(t.Context(), e.last, at); err != nil {
		t.Fatal(err)
	}
	e.last = at
	return at
}

// loadRecordingRules copies the shipped recording rules (or the file
// HERMES_SCALE_RECORDING_RULES names, to compare two versions) where
// Prometheus looks, reloads it, and writes ticks until every route has its
// records.
func (e *env) loadRecordingRules(t *testing.T) {
	t.Helper()
	path := recordingRules
	if p := os.Getenv("HERMES_SCALE_RECORDING_RULES"); p != "" {
		path = p // another version of the rules, to compare
	}
	e.ruleFile = path
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(e.rules, "hermes-recording.rules.yml"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post(e.prom.URL+"/-/reload", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("reloading Prometheus: %s", resp.Status)
	}
	// The last records of each group: every group has run over the fleet.
	// (The throughput ratio's own last record needs an hour of history.)
	last := []string{
		"route:llm_gateway_requests:increase5m",
		"route:llm_gateway_request_duration_seconds:count_increase2m",
		"route:llm_gateway_response_size_bytes:mean1h", // every minute
		"route:llm_gateway_request_duration_seconds:samples_min2m_1h_offset30m",
		// Both read the 1h quantiles, which the baselines group computes
		// from the latency group's 1m rates: they exist from the first
		// baselines round after the latency group's first round, which may
		// be the second after loading.
		"route:llm_gateway_p99_ratio:min2m_over_1h_offset30m",
		"route:llm_gateway_p95_ratio:min2m_over_1h_offset30m",
		"route:llm_gateway_response_size_ratio:mean15m_over_1h_offset1h",
		"route:llm_gateway_quality_score:avg",
	}
	deadline := time.Now().Add(5 * time.Minute)
	for {
		e.next(t)
		missing := ""
		for _, r := range last {
			if n, err := e.prom.QueryValue("count(" + r + ")"); err != nil || int(n) != e.routes {
				missing = r
				break
			}
		}
		if missing == "" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 5m, %s does not have a series per route", missing)
		}
	}
}

// fleetConfig writes the policy at path with the fleet's services and
// prometheus.url pointing at e, and loads it.
func (e *env) fleetConfig(t *testing.T, path string) (string, *config.Config) {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out, err := benchfleet.ConfigYAMLFrom(src, e.routes)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(out), "url: http://127.0.0.1:9090", "url: "+e.prom.URL, 1)
	file := filepath.Join(t.TempDir(), filepath.Base(path))
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := config.Load(file)
	if err != nil {
		t.Fatal(err)
	}
	return file, cfg
}

// logRuleGroups logs how long the last round of each rule group took
// against its interval, and how many samples a round reads (each rule
// evaluated once more as an instant query at the last samples written,
// with its statistics) and per
// 15 s: rounds well inside their interval are what keeps the records a
// tick reads fresh, and the samples read are their work whatever the
// machine's load.
func (e *env) logRuleGroups(t *testing.T) []promfleet.RuleGroup {
	t.Helper()
	groups, err := promfleet.RuleGroups(context.Background(), http.DefaultClient, e.prom.URL)
	if err != nil {
		t.Fatal(err)
	}
	loaded, err := backtest.LoadRecordingRules(e.ruleFile)
	if err != nil {
		t.Fatal(err)
	}
	samples := map[string]int64{}
	for _, g := range loaded {
		for _, r := range g.Rules {
			n, err := promfleet.QuerySamples(context.Background(), http.DefaultClient, e.prom.URL, r.Expr, e.last)
			if err != nil {
				t.Fatal(err)
			}
			samples[g.Name] += n
		}
	}
	var lines []string
	var per15s float64
	for _, g := range groups {
		name := g.Name[strings.LastIndex(g.Name, ";")+1:]
		n := samples[name]
		if g.Interval > 0 {
			per15s += float64(n) * float64(promfleet.Interval) / float64(g.Interval)
		}
		lines = append(lines, fmt.Sprintf("%s, %d samples read per round", g, n))
	}
	t.Logf("%d routes, rule groups' last round (load average %s), %.3g samples read per 15 s in all:\n  %s", e.routes, loadAverage(), per15s, strings.Join(lines, "\n  "))
	return groups
}

// cpuSeconds is Prometheus's CPU time so far.
func (e *env) cpuSeconds(t *testing.T) float64 {
	t.Helper()
	v, err := promfleet.CPUSeconds(context.Background(), http.DefaultClient, e.prom.URL)
	if err != nil {
		t.Fatal(err)
	}
	return v
}
