package probe

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/hermes-failover/hermes/internal/fakeopenai"
)

// testConfig probes one route "free" at srv, every layer failing at the
// first failure.
func testConfig(t *testing.T, base string, extra string) *Config {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "key"), []byte("sk-secret-123\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	yaml := fmt.Sprintf(`defaults:
  liveness: {interval: 30s, timeout: 1s, failure_threshold: 1}
  readiness: {interval: 10s, timeout: 1s, failure_threshold: 1}
  e2e: {interval: 1m, timeout: 1s, failure_threshold: 1}
  boundary: {interval: 24h, timeout: 1s, failure_threshold: 1}
targets:
  - route: free
    base_url: %s/v1
    model: %s
    api_key_file: key
%s`, base, fakeopenai.Model, extra)
	path := filepath.Join(dir, "probe.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// gather returns every sample as "name{l1=v1,...}" → value (counters,
// gauges) in label-name order.
func gather(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, lp := range m.GetLabel() {
				ls = append(ls, lp.GetName()+"="+lp.GetValue())
			}
			out[mf.GetName()+"{"+strings.Join(ls, ",")+"}"] = value(m)
		}
	}
	return out
}

func value(m *dto.Metric) float64 {
	if m.Counter != nil {
		return m.Counter.GetValue()
	}
	return m.Gauge.GetValue()
}

func successKey(probe, layer string) string {
	return fmt.Sprintf("llm_probe_success{layer=%s,probe=%s,route=free}", layer, probe)
}

func verdictKey(probe, verdict, reason string) string {
	return fmt.Sprintf("llm_probe_verdict_total{probe=%s,reason=%s,route=free,verdict=%s}", probe, reason, verdict)
}

// TestProbeModes runs every layer once against the fake API in each of its
// modes and asserts every exported series.
func TestProbeModes(t *testing.T) {
	srv := fakeopenai.Start(t)
	srv.APIKey = "sk-secret-123"
	srv.SetDelay(3 * time.Second) // over the 1s timeouts
	prompts := []string{"short_answer", "json_output", "summary", "multi_turn"}
	all := func(reason string) map[string]string {
		m := map[string]string{}
		for _, p := range prompts {
			m[p] = reason
		}
		return m
	}
	tests := []struct {
		mode            fakeopenai.Mode
		live, ready     bool
		e2e             map[string]string // prompt → reason ("" ok, "hard" hard_fail)
		boundaryOK      bool              // boundary probes pass, except boundaryFailing
		boundaryFailing []string
	}{
		{fakeopenai.Healthy, true, true, all(""), true, nil},
		{fakeopenai.Truncated, true, true, all("truncated"), true, nil},
		{fakeopenai.ErrorTemplate, true, true, all("error_body"), false, nil},
		{fakeopenai.Fallback, true, true, all("fallback_phrase"), true, nil},
		{fakeopenai.Empty, true, true, all("empty"), true, nil},
		{fakeopenai.TooShort, true, true, map[string]string{"short_answer": "too_short", "json_output": "invalid_json", "summary": "too_short", "multi_turn": "too_short"}, true, nil},
		{fakeopenai.InvalidJSON, true, true, all("invalid_json"), false, nil},
		{fakeopenai.Slow, true, true, all("hard"), false, nil},
		{fakeopenai.ServerError, false, false, all("hard"), false, nil},
		{fakeopenai.Unready, true, false, all("hard"), false, nil},
		{fakeopenai.Drop, false, false, all("hard"), false, nil},
		{fakeopenai.StrictParams, true, true, all(""), true, []string{"max_tokens_min", "temperature_max", "top_p_min"}},
	}
	for _, tt := range tests {
		t.Run(string(tt.mode), func(t *testing.T) {
			srv.SetMode(tt.mode)
			reg := prometheus.NewRegistry()
			var logs strings.Builder
			p, err := New(testConfig(t, srv.URL, ""), reg, nil, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug})))
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()
			for _, layer := range Layers {
				p.RunLayer(ctx, "free", layer)
			}
			got := gather(t, reg)
			want := map[string]float64{
				successKey("http", Liveness):    b2f(tt.live),
				successKey("models", Readiness): b2f(tt.ready),
			}
			for probe, reason := range tt.e2e {
				want[successKey(probe, E2E)] = b2f(reason == "")
				switch reason {
				case "":
					want[verdictKey(probe, "ok", "")] = 1
				case "hard":
					want[verdictKey(probe, "hard_fail", "")] = 1
				default:
					want[verdictKey(probe, "soft_fail", reason)] = 1
				}
				if _, ok := got[fmt.Sprintf("llm_probe_duration_seconds{layer=e2e,probe=%s,route=free}", probe)]; !ok {
					t.Errorf("no duration for %s", probe)
				}
			}
			for _, bc := range boundaryCases {
				want[successKey(bc.name, Boundary)] = b2f(tt.boundaryOK)
			}
			for _, name := range tt.boundaryFailing {
				want[successKey(name, Boundary)] = 0
			}
			if tt.mode == fakeopenai.Healthy {
				for _, probe := range prompts {
					if got[fmt.Sprintf("llm_probe_tokens_total{probe=%s,route=free}", probe)] <= 0 {
						t.Errorf("no tokens counted for %s", probe)
					}
				}
				if left := got["llm_probe_budget_remaining_tokens{route=free}"]; left <= 0 || left >= float64(defaultDefaults.TokenBudget.Tokens) {
					t.Errorf("budget remaining %v", left)
				}
			}
			for k, w := range want {
				if g, ok := got[k]; !ok || g != w {
					t.Errorf("%s = %v (present %v), want %v", k, g, ok, w)
				}
			}
			if t.Failed() {
				t.Logf("all series: %v\nlogs:\n%s", got, logs.String())
			}
			if strings.Contains(logs.String(), "sk-secret-123") {
				t.Error("the API key was logged")
			}
		})
	}
	for _, h := range srv.Headers() {
		if h.Get(ProbeHeader) == "" || h.Get("Authorization") != "Bearer sk-secret-123" {
			t.Fatalf("a request without probe header or key: %v", h)
		}
	}
}

func b2f(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// TestFailureThreshold: success drops only after failure_threshold
// failures in a row and comes back at the first success.
func TestFailureThreshold(t *testing.T) {
	srv := fakeopenai.Start(t)
	reg := prometheus.NewRegistry()
	cfg := testConfig(t, srv.URL, "    readiness: {failure_threshold: 3}\n")
	p, err := New(cfg, reg, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	key := successKey("models", Readiness)
	p.RunLayer(ctx, "free", Readiness)
	srv.SetMode(fakeopenai.Unready)
	for i, want := range []float64{1, 1, 0, 0} {
		p.RunLayer(ctx, "free", Readiness)
		if got := gather(t, reg)[key]; got != want {
			t.Fatalf("after %d failures: %v, want %v", i+1, got, want)
		}
	}
	srv.SetMode(fakeopenai.Healthy)
	p.RunLayer(ctx, "free", Readiness)
	if got := gather(t, reg)[key]; got != 1 {
		t.Fatalf("after a success: %v", got)
	}
	if got := gather(t, reg)[verdictKey("models", "soft_fail", "missing_field")]; got != 4 {
		t.Fatalf("missing_field verdicts: %v", got)
	}
}

// TestTokenBudget: a spent budget pauses e2e probes and withdraws their
// series until the next window.
func TestTokenBudget(t *testing.T) {
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
	p.RunLayer(ctx, "free", E2E) // spends the budget part-way through the set
	calls := srv.Requests("/v1/chat/completions")
	if calls == 0 || calls == 4 {
		t.Fatalf("%d calls: the budget should stop the set part-way", calls)
	}
	p.RunLayer(ctx, "free", E2E)
	p.RunLayer(ctx, "free", Boundary)
	got := gather(t, reg)
	if srv.Requests("/v1/chat/completions") != calls {
		t.Fatalf("probes ran with a spent budget")
	}
	if got["llm_probe_paused{route=free}"] != 1 || got["llm_probe_budget_remaining_tokens{route=free}"] != 0 {
		t.Fatalf("paused %v, remaining %v", got["llm_probe_paused{route=free}"], got["llm_probe_budget_remaining_tokens{route=free}"])
	}
	for k := range got {
		if strings.HasPrefix(k, "llm_probe_success{layer=e2e") {
			t.Fatalf("e2e series kept while paused: %s", k)
		}
	}
	now = now.Add(time.Hour)
	p.RunLayer(ctx, "free", E2E)
	if n := srv.Requests("/v1/chat/completions"); n <= calls {
		t.Fatalf("probes did not resume in the next window: %d calls (%d before)", n, calls)
	}
}

// TestProbePanicRecordsNothing: a probe run whose judge panics (here, a
// prompt without its Validator) records no result, is counted and
// logged once, and stops neither the prober nor the route's other
// layers.
func TestProbePanicRecordsNothing(t *testing.T) {
	srv := fakeopenai.Start(t)
	srv.APIKey = "sk-secret-123"
	reg := prometheus.NewRegistry()
	var logs strings.Builder
	p, err := New(testConfig(t, srv.URL, ""), reg, nil, slog.New(slog.NewTextHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := gather(t, reg)["llm_probe_panics_total{layer=e2e,route=free}"]; !ok || v != 0 {
		t.Errorf("llm_probe_panics_total before any panic: %v, %v; want the series at 0", v, ok)
	}
	tg := p.targets[0]
	for name := range tg.validators {
		tg.validators[name] = nil
	}
	p.RunLayer(context.Background(), "free", E2E)
	p.RunLayer(context.Background(), "free", E2E)
	p.RunLayer(context.Background(), "free", Liveness)
	got := gather(t, reg)
	if n, want := got["llm_probe_panics_total{layer=e2e,route=free}"], float64(2*len(tg.prompts)); n != want || want == 0 {
		t.Errorf("llm_probe_panics_total = %v, want %v", n, want)
	}
	for k, v := range got {
		if strings.HasPrefix(k, "llm_probe_results_total{") && strings.Contains(k, "layer=e2e") && v != 0 {
			t.Errorf("a run that panicked recorded %s %v", k, v)
		}
	}
	if v := got[successKey("http", Liveness)]; v != 1 {
		t.Errorf("liveness after the panics: llm_probe_success %v, want 1", v)
	}
	if n := strings.Count(logs.String(), "a probe run panicked"); n != 1 {
		t.Errorf("logged %d times, want once:\n%s", n, logs.String())
	}
}
