package proxy

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/gateway/validate"
)

func TestMinimalConfig(t *testing.T) {
	cfg, err := Parse([]byte("routes:\n  - name: free\n    upstream: https://api.free-provider.example\n"), "proxy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	r := cfg.Routes[0]
	if r.Limits != DefaultLimits {
		t.Errorf("limits %+v, want the defaults %+v", r.Limits, DefaultLimits)
	}
	if !r.HTTPConfig.FollowRedirects || !r.HTTPConfig.EnableHTTP2 {
		t.Errorf("http_config did not get prometheus/common's defaults: %+v", r.HTTPConfig)
	}
	if r.HTTPConfig.Authorization != nil || r.HTTPConfig.BasicAuth != nil {
		t.Errorf("credentials injected by default: %+v", r.HTTPConfig)
	}
}

// TestJudgedPathsFollowTheFormat: a route that names no judged_paths
// judges the calls of its validation format.
func TestJudgedPathsFollowTheFormat(t *testing.T) {
	cfg, err := Parse([]byte(`routes:
  - name: free
    upstream: https://api.free-provider.example
  - name: claude
    upstream: https://claude-relay.example
    validation: {format: anthropic_messages}
  - name: named
    upstream: https://relay.example
    validation: {format: anthropic_messages}
    judged_paths: [/v1/messages]
  - name: codex
    upstream: https://codex-relay.example
    validation: {format: openai_responses}
`), "proxy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range [][]string{{"/chat/completions"}, {"/messages"}, {"/v1/messages"}, {"/responses"}} {
		if got := cfg.Routes[i].JudgedPaths; !slices.Equal(got, want) {
			t.Errorf("%s: judged_paths %q, want %q", cfg.Routes[i].Name, got, want)
		}
	}
}

func TestGoodConfig(t *testing.T) {
	cfg, err := Load("testdata/proxy.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	free, paid := cfg.Routes[0], cfg.Routes[1]
	if free.IdleTimeout != 90*time.Second || free.FirstByteTimeout != DefaultLimits.FirstByteTimeout {
		t.Errorf("free's limits %+v: want defaults.idle_timeout and the built-in rest", free.Limits)
	}
	want := Limits{MaxConcurrentRequests: 256, FirstByteTimeout: 30 * time.Second, IdleTimeout: 90 * time.Second, TotalTimeout: 5 * time.Minute, ClientBodyTimeout: 20 * time.Second}
	if paid.Limits != want {
		t.Errorf("paid-standard's limits %+v, want %+v", paid.Limits, want)
	}
	if paid.Validation.MinLength != 20 || paid.Validation.MaxBodyBytes != 1<<20 {
		t.Errorf("validation %+v", paid.Validation)
	}
	if paid.HTTPConfig.ProxyURL.URL == nil || paid.HTTPConfig.ProxyURL.Host != "egress.internal:3128" {
		t.Errorf("http_config.proxy_url %v", paid.HTTPConfig.ProxyURL)
	}
}

// TestBadConfigs: every problem of each *.bad.yaml is reported at its
// line, as its "# want: LINE: message" comments say, and nothing else.
func TestBadConfigs(t *testing.T) {
	files, _ := filepath.Glob("testdata/*.bad.yaml")
	if len(files) == 0 {
		t.Fatal("no bad fixtures")
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			_, err := Load(path)
			if err == nil {
				t.Fatal("no error")
			}
			got := strings.Split(err.Error(), "\n")
			wants := wantLines(t, path)
			if len(got) != len(wants) {
				t.Errorf("%d problems, want %d:\n%v", len(got), len(wants), err)
			}
			for _, w := range wants {
				if !strings.Contains(err.Error(), path+":"+w) {
					t.Errorf("missing %q in:\n%v", path+":"+w, err)
				}
			}
		})
	}
}

// wantLines reads the "# want: " comments of a fixture.
func wantLines(t *testing.T, path string) []string {
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for line := range strings.Lines(string(data)) {
		if w, ok := strings.CutPrefix(strings.TrimSpace(line), "# want: "); ok {
			out = append(out, w)
		}
	}
	return out
}

// TestValidationIsTheProbesSchema: a route's validation block takes every
// key of validate.Rules, the schema the prober and instrument use.
func TestValidationIsTheProbesSchema(t *testing.T) {
	cfg, err := Parse([]byte(`routes:
  - name: free
    upstream: http://127.0.0.1:1
    validation:
      format: openai_chat
      required_fields: ["choices[0].message.content"]
      min_length: 3
      fallback_phrases: ["busy"]
      fallback_max_chars: 50
      error_patterns: ["oops"]
      schema: '{"type": "object"}'
      max_body_bytes: 1000
      rejected_codes: {too_long: context_length}
`), "proxy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	want := validate.Rules{Format: validate.FormatOpenAIChat, RequiredFields: []string{"choices[0].message.content"}, MinLength: 3,
		FallbackPhrases: []string{"busy"}, FallbackMaxChars: 50, ErrorPatterns: []string{"oops"}, Schema: `{"type": "object"}`,
		MaxBodyBytes: 1000, RejectedCodes: map[string]validate.Reason{"too_long": validate.ReasonContextLength}}
	got := cfg.Routes[0].Validation
	if got.Format != want.Format || got.MinLength != want.MinLength || got.Schema != want.Schema || got.MaxBodyBytes != want.MaxBodyBytes ||
		got.FallbackMaxChars != want.FallbackMaxChars || len(got.RequiredFields) != 1 || len(got.FallbackPhrases) != 1 ||
		len(got.ErrorPatterns) != 1 || got.RejectedCodes["too_long"] != validate.ReasonContextLength {
		t.Errorf("validation %+v, want %+v", got, want)
	}
}
