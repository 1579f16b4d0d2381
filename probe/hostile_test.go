package probe

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/gateway/validate"
	"github.com/hermes-failover/hermes/internal/faults"
)

// hostileConfig probes route "free" at a fault of srv with one prompt.
func hostileConfig(t *testing.T, base string, prompt string) *Config {
	t.Helper()
	cfg, err := Parse([]byte(fmt.Sprintf(`defaults:
  e2e: {interval: 1m, timeout: 1s, failure_threshold: 1}
targets:
  - route: free
    base_url: %s
    model: %s
    token_budget: {tokens: 100000, per: 24h}
prompts:
%s`, base, faults.Model, prompt)), "probe.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// probeOnce runs the e2e layer of route "free" once against a fault of
// srv with one prompt and returns the prober's series.
func probeOnce(t *testing.T, srv *faults.Server, f faults.Fault, prompt string) map[string]float64 {
	t.Helper()
	reg := prometheus.NewRegistry()
	p, err := New(hostileConfig(t, srv.BaseURL(f), prompt), reg, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	p.RunLayer(context.Background(), "free", E2E)
	return gather(t, reg)
}

const hostilePrompt = `  - name: hello
    messages: [{role: user, content: "Say hello."}]
    max_tokens: 40
`

// TestTokensCappedAtMaxTokens: a reply without usage that sends far more
// than max_tokens and never ends (cut by the timeout) counts at most the
// prompt and max_tokens, plain and streamed.
func TestTokensCappedAtMaxTokens(t *testing.T) {
	srv := faults.Start(t)
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			prompt := hostilePrompt + fmt.Sprintf("    stream: %v\n", stream)
			got := probeOnce(t, srv, faults.Endless, prompt)
			most := float64(utf8.RuneCountInString("Say hello.")/4 + 1 + 40)
			if tokens := got["llm_probe_tokens_total{probe=hello,route=free}"]; tokens <= 0 || tokens > most {
				t.Errorf("tokens %v, want 1..%v", tokens, most)
			}
			if got[verdictKey("hello", "soft_fail", "truncated")] != 1 {
				t.Errorf("verdicts: %v", got)
			}
		})
	}
}

// TestTokensCappedWhenUsageLies: a reply whose usage claims 40 M tokens
// counts at most the prompt's bytes and its template and max_tokens: one
// reply must not spend the day's budget and pause the probes.
func TestTokensCappedWhenUsageLies(t *testing.T) {
	srv := faults.Start(t)
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			prompt := hostilePrompt + fmt.Sprintf("    stream: %v\n", stream)
			got := probeOnce(t, srv, faults.UsageFlood, prompt)
			most := float64(len("Say hello.") + 2*promptOverheadTokens + 40)
			if tokens := got["llm_probe_tokens_total{probe=hello,route=free}"]; tokens <= 0 || tokens > most {
				t.Errorf("tokens %v, want 1..%v", tokens, most)
			}
			if got["llm_probe_budget_remaining_tokens{route=free}"] < 100000-most || got[verdictKey("hello", "ok", "")] != 1 {
				t.Errorf("series: %v", got)
			}
		})
	}
}

// TestTokensCappedWithoutMaxTokens: a streamed flood without usage, on a
// prompt without max_tokens, counts at most the prompt and
// DefaultMaxReplyTokens.
func TestTokensCappedWithoutMaxTokens(t *testing.T) {
	srv := faults.Start(t)
	prompt := `  - name: hello
    messages: [{role: user, content: "Say hello."}]
    stream: true
`
	got := probeOnce(t, srv, faults.Endless, prompt)
	most := float64(utf8.RuneCountInString("Say hello.")/4 + 1 + DefaultMaxReplyTokens)
	if tokens := got["llm_probe_tokens_total{probe=hello,route=free}"]; tokens <= 0 || tokens > most {
		t.Errorf("tokens %v, want 1..%v", tokens, most)
	}
}

// TestBodyTooLarge: a complete reply over the prompt's max_body_bytes
// fails the probe with its own reason, as blackbox_exporter's
// body_size_limit does.
func TestBodyTooLarge(t *testing.T) {
	srv := faults.Start(t)
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			prompt := hostilePrompt + fmt.Sprintf("    stream: %v\n    validation: {max_body_bytes: 65536}\n", stream)
			got := probeOnce(t, srv, faults.Oversized, prompt)
			if got[verdictKey("hello", "soft_fail", string(validate.ReasonBodyTooLarge))] != 1 || got[successKey("hello", E2E)] != 0 {
				t.Errorf("series: %v", got)
			}
		})
	}
}

// TestGzipBombIsTooLarge: a reply that inflates past max_body_bytes fails
// the probe with body_too_large, however few bytes came over the wire.
func TestGzipBombIsTooLarge(t *testing.T) {
	srv := faults.Start(t)
	prompt := hostilePrompt + "    validation: {max_body_bytes: 65536}\n"
	got := probeOnce(t, srv, faults.GzipBomb, prompt)
	if got[verdictKey("hello", "soft_fail", string(validate.ReasonBodyTooLarge))] != 1 || got[successKey("hello", E2E)] != 0 {
		t.Errorf("series: %v", got)
	}
}

// TestBudgetPauseWarns: the pause of a spent budget is logged once, at
// warn, and exported.
func TestBudgetPauseWarns(t *testing.T) {
	srv := faults.Start(t)
	cfg := hostileConfig(t, srv.BaseURL(faults.Healthy), hostilePrompt)
	cfg.Targets[0].TokenBudget = Budget{Tokens: 30, Per: time.Hour}
	reg := prometheus.NewRegistry()
	var logs strings.Builder
	p, err := New(cfg, reg, nil, slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})))
	if err != nil {
		t.Fatal(err)
	}
	for range 3 {
		p.RunLayer(context.Background(), "free", E2E)
	}
	if got := gather(t, reg)["llm_probe_paused{route=free}"]; got != 1 {
		t.Errorf("llm_probe_paused = %v", got)
	}
	if n := strings.Count(logs.String(), "level=WARN msg=\"token budget spent"); n != 1 {
		t.Errorf("%d warnings, want 1:\n%s", n, logs.String())
	}
}

// TestProbeTimeToFirstToken: a streamed prompt exports its time to first
// token; it is at least the delay the upstream held the token back.
func TestProbeTimeToFirstToken(t *testing.T) {
	srv := faults.Start(t)
	prompt := hostilePrompt + "    stream: true\n"
	got := probeOnce(t, srv, faults.SlowFirstToken, prompt)
	ttft, ok := got["llm_probe_time_to_first_token_seconds{layer=e2e,probe=hello,route=free}"]
	if !ok || ttft < srv.FirstTokenDelay.Seconds() {
		t.Errorf("time to first token %v (present %v), want at least %v: %v", ttft, ok, srv.FirstTokenDelay, got)
	}
}

// TestDefaultScheduleFitsBudget: the built-in prompts at the default e2e
// interval, and the boundary cases daily, spend at most half the default
// budget even if every reply used all its max_tokens.
func TestDefaultScheduleFitsBudget(t *testing.T) {
	worst := 0
	for _, pr := range DefaultPrompts() {
		chars := 0
		for _, m := range pr.Messages {
			chars += utf8.RuneCountInString(m.Content)
		}
		worst += chars/4 + 1 + pr.MaxTokens
	}
	perDay := worst * int(24*time.Hour/defaultDefaults.E2E.Interval)
	for _, bc := range boundaryCases {
		perDay += utf8.RuneCountInString(boundaryPrompt)/4 + 1 + bc.maxTokens
	}
	if b := defaultDefaults.TokenBudget; b.Per != 24*time.Hour || perDay > b.Tokens/2 {
		t.Errorf("the default schedule may spend %d tokens a day; the default budget is %d per %s", perDay, b.Tokens, b.Per)
	}
}

// TestTokensFromUsage: the reply's usage, each part capped; a reply with
// only total_tokens is capped at both caps; negative counts count nothing;
// thinking counts whether completion_tokens holds it or not.
func TestTokensFromUsage(t *testing.T) {
	req := chatRequest{Messages: []chatMessage{{Role: "user", Content: "Say hello."}}, MaxTokens: 40}
	maxPrompt := len("Say hello.") + 2*promptOverheadTokens
	for _, tt := range []struct {
		usage validate.Usage
		want  int
	}{
		{validate.Usage{PromptTokens: 12, CompletionTokens: 11, TotalTokens: 23}, 23},
		{validate.Usage{PromptTokens: 12, CompletionTokens: 40_000_000, TotalTokens: 40_000_012}, 12 + 40},
		{validate.Usage{PromptTokens: 40_000_000, CompletionTokens: 5}, maxPrompt + 5},
		{validate.Usage{TotalTokens: 40_000_000}, maxPrompt + 40},
		{validate.Usage{TotalTokens: 30}, 30},
		{validate.Usage{PromptTokens: -5, CompletionTokens: 7}, 7},
		// Thinking a gateway left out of completion_tokens is spent too.
		{validate.Usage{PromptTokens: 12, CompletionTokens: 0, TotalTokens: 32, ReasoningTokens: 20}, 32},
		{validate.Usage{PromptTokens: 12, CompletionTokens: 3, TotalTokens: 15, ReasoningTokens: 30}, 12 + 30},
	} {
		if got := tokens(req, validate.Result{Usage: tt.usage}); got != tt.want {
			t.Errorf("usage %+v: %d tokens, want %d", tt.usage, got, tt.want)
		}
	}
}
