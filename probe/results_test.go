package probe

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hermes-failover/hermes/internal/fakeopenai"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// results returns route free's llm_probe_results_total series of one
// layer and probe, as "verdict/reason" → count.
func results(t *testing.T, reg *prometheus.Registry, layer, probe string) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, vr := range resultSeries(layer) {
		k := fmt.Sprintf("llm_probe_results_total{layer=%s,probe=%s,reason=%s,route=free,verdict=%s}", layer, probe, vr[1], vr[0])
		v, ok := gather(t, reg)[k]
		if !ok {
			t.Fatalf("%s is missing: it should exist from the start", k)
		}
		out[vr[0]+"/"+vr[1]] = v
	}
	return out
}

// seriesCount is how many llm_probe_results_total series the registry has.
func seriesCount(t *testing.T, reg *prometheus.Registry) int {
	t.Helper()
	n, err := testutil.GatherAndCount(reg, "llm_probe_results_total")
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestResultsCountEachResult: against a real HTTP upstream that fails
// intermittently, llm_probe_results_total counts every result as itself
// while llm_probe_success folds failures below failure_threshold away.
func TestResultsCountEachResult(t *testing.T) {
	srv := fakeopenai.Start(t)
	srv.APIKey = "sk-secret-123"
	srv.SetDelay(3 * time.Second) // over the 1s timeout
	cfg := testConfig(t, srv.URL, `    probes: [short_answer]
    liveness: {disabled: true}
    readiness: {disabled: true}
    boundary: {disabled: true}
    e2e: {failure_threshold: 2}
`)
	reg := prometheus.NewRegistry()
	p, err := New(cfg, reg, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	// ok, 8 soft-failure reasons and 7 hard-failure reasons, all at 0.
	initial := seriesCount(t, reg)
	if initial != 16 {
		t.Fatalf("%d series before any probe, want 16", initial)
	}
	for k, v := range results(t, reg, E2E, "short_answer") {
		if v != 0 {
			t.Fatalf("%s = %v before any probe", k, v)
		}
	}

	want := map[string]float64{}
	ctx := context.Background()
	steps := []struct {
		mode  fakeopenai.Mode
		count string  // verdict/reason the result is counted under
		gauge float64 // llm_probe_success after it, failure_threshold 2
	}{
		// Every other probe fails: the gauge never sees two in a row.
		{fakeopenai.Healthy, "ok/", 1},
		{fakeopenai.ServerError, "hard_fail/http_5xx", 1},
		{fakeopenai.Healthy, "ok/", 1},
		{fakeopenai.Fallback, "soft_fail/fallback_phrase", 1},
		{fakeopenai.Healthy, "ok/", 1},
		{fakeopenai.Drop, "hard_fail/conn_error", 1},
		// Two in a row: the gauge drops at the second, the first success
		// brings it back.
		{fakeopenai.Healthy, "ok/", 1},
		{fakeopenai.Slow, "hard_fail/timeout", 1},
		{fakeopenai.Truncated, "soft_fail/truncated", 0},
		{fakeopenai.Unready, "hard_fail/http_4xx", 0},
		{fakeopenai.Healthy, "ok/", 1},
	}
	for i, s := range steps {
		srv.SetMode(s.mode)
		p.RunLayer(ctx, "free", E2E)
		want[s.count]++
		for k, v := range results(t, reg, E2E, "short_answer") {
			if v != want[k] {
				t.Errorf("after step %d (%s): %s = %v, want %v", i+1, s.mode, k, v, want[k])
			}
		}
		if got := gather(t, reg)[successKey("short_answer", E2E)]; got != s.gauge {
			t.Errorf("after step %d (%s): llm_probe_success = %v, want %v", i+1, s.mode, got, s.gauge)
		}
		if t.Failed() {
			t.FailNow()
		}
	}
	// 11 results, 5 of them ok: what a policy reading the counter sees.
	// The gauge read 1 after 9 of the 11.
	if got := want["ok/"]; got != 5 {
		t.Fatalf("ok results %v", got)
	}
	if n := seriesCount(t, reg); n != initial {
		t.Fatalf("%d series after the probes, %d before: a result was counted under a series not created at 0", n, initial)
	}
}

// TestResultsSeriesComplete: whatever the upstream does, on every layer,
// a result is counted under a series New created at 0 (so increase() sees
// the first one), and llm_probe_results_total counts as many results as
// llm_probe_verdict_total.
func TestResultsSeriesComplete(t *testing.T) {
	srv := fakeopenai.Start(t)
	srv.APIKey = "sk-secret-123"
	srv.SetDelay(3 * time.Second)
	reg := prometheus.NewRegistry()
	p, err := New(testConfig(t, srv.URL, ""), reg, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	// Liveness 8, readiness 16, 4 prompts and 5 boundary cases 16 each.
	initial := seriesCount(t, reg)
	if want := 8 + 16 + 4*16 + 5*16; initial != want {
		t.Fatalf("%d series at start, want %d", initial, want)
	}
	for _, mode := range fakeopenai.Modes {
		srv.SetMode(mode)
		for _, layer := range Layers {
			p.RunLayer(context.Background(), "free", layer)
		}
		if n := seriesCount(t, reg); n != initial {
			t.Fatalf("mode %s: %d series, %d at start", mode, n, initial)
		}
	}
	var total, verdicts float64
	for k, v := range gather(t, reg) {
		switch {
		case strings.HasPrefix(k, "llm_probe_results_total{"):
			total += v
		case strings.HasPrefix(k, "llm_probe_verdict_total{"):
			verdicts += v
		}
	}
	// Per mode: liveness, readiness, 4 prompts, 5 boundary cases.
	if want := float64(len(fakeopenai.Modes) * 11); total != want || verdicts != want {
		t.Fatalf("%v results, %v verdicts counted, want %v", total, verdicts, want)
	}
}

// TestResultsSkippedByBudget: probes the spent budget skips are not
// results, and the counters are not withdrawn with the success series.
func TestResultsSkippedByBudget(t *testing.T) {
	srv := fakeopenai.Start(t)
	reg := prometheus.NewRegistry()
	cfg := testConfig(t, srv.URL, "    token_budget: {tokens: 150, per: 1h}\n")
	p, err := New(cfg, reg, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 1, 1, 10, 0, 0, 0, time.UTC)
	p.now = func() time.Time { return now }
	ctx := context.Background()
	e2eResults := func() float64 {
		var sum float64
		for _, pr := range DefaultPrompts() {
			for _, v := range results(t, reg, E2E, pr.Name) {
				sum += v
			}
		}
		return sum
	}
	p.RunLayer(ctx, "free", E2E) // spends the budget part-way through the set
	calls := srv.Requests("/v1/chat/completions")
	if calls == 0 || calls == 4 {
		t.Fatalf("%d calls: the budget should stop the set part-way", calls)
	}
	if got := e2eResults(); got != float64(calls) {
		t.Fatalf("%v results counted for %d probes", got, calls)
	}
	p.RunLayer(ctx, "free", E2E)
	p.RunLayer(ctx, "free", E2E)
	if srv.Requests("/v1/chat/completions") != calls {
		t.Fatal("probes ran with a spent budget")
	}
	if got := e2eResults(); got != float64(calls) {
		t.Fatalf("%v results counted after skipped runs, want %d", got, calls)
	}
}

// TestResultsNotCountedAtShutdown: a probe cut by the prober's own
// shutdown is not a result.
func TestResultsNotCountedAtShutdown(t *testing.T) {
	srv := fakeopenai.Start(t)
	srv.Hold() // the streamed summary stops after its first event
	reg := prometheus.NewRegistry()
	cfg := testConfig(t, srv.URL, "    probes: [summary]\n")
	p, err := New(cfg, reg, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { p.RunLayer(ctx, "free", E2E); close(done) }()
	testenv.Eventually(t, 5*time.Second, "the summary probe to be sent", func() bool {
		return srv.Requests("/v1/chat/completions") == 1
	})
	cancel()
	<-done
	for k, v := range results(t, reg, E2E, "summary") {
		if v != 0 {
			t.Fatalf("%s = %v: a probe cancelled at shutdown was counted", k, v)
		}
	}
}

// flakyAPI is stubAPI with every third /models answer a 503.
type flakyAPI struct {
	stubAPI
	mu     sync.Mutex
	models int
}

func (f *flakyAPI) Do(req *http.Request) (*http.Response, error) {
	resp, err := f.stubAPI.Do(req)
	if req.URL.Path == "/v1/models" {
		f.mu.Lock()
		f.models++
		fail := f.models%3 == 0
		f.mu.Unlock()
		if fail {
			resp.StatusCode = http.StatusServiceUnavailable
		}
	}
	return resp, err
}

// TestRunCountsEachResult runs the prober for ten (fake) minutes against
// an API whose every third readiness answer is a 503: the counter holds
// each of the 60 results, whatever the gauge's threshold of 2 shows.
func TestRunCountsEachResult(t *testing.T) {
	cfg := testConfig(t, "http://probe.invalid", "    boundary: {disabled: true}\n    e2e: {disabled: true}\n    readiness: {failure_threshold: 2}\n")
	synctest.Test(t, func(t *testing.T) {
		api := &flakyAPI{stubAPI: stubAPI{calls: map[string]int{}}}
		reg := prometheus.NewRegistry()
		p, err := New(cfg, reg, api, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { p.Run(ctx); close(done) }()
		time.Sleep(10*time.Minute - time.Second)
		synctest.Wait()
		got := results(t, reg, Readiness, "models")
		if got["ok/"] != 40 || got["hard_fail/http_5xx"] != 20 {
			t.Errorf("readiness results: %v; want 40 ok, 20 hard_fail/http_5xx", got)
		}
		if g := gather(t, reg)[successKey("models", Readiness)]; g != 1 {
			t.Errorf("llm_probe_success %v: a lone failure should stay below failure_threshold 2", g)
		}
		cancel()
		<-done
	})
}
