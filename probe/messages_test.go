package probe

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
)

// messagesServer answers as Anthropic's API does (GET /v1/models, POST
// /v1/messages, plain and streamed), a fitting answer to each built-in
// prompt, and keeps each call's headers and body.
type messagesServer struct {
	mu    sync.Mutex
	calls []messagesCall
}

type messagesCall struct {
	header http.Header
	body   map[string]any
}

func (s *messagesServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1":
		return
	case "/v1/models":
		fmt.Fprint(w, `{"data":[{"type":"model","id":"claude-test","display_name":"Claude Test"}],"has_more":false}`)
		return
	case "/v1/messages":
	default:
		http.NotFound(w, r)
		return
	}
	var body map[string]any
	b, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(b, &body)
	s.mu.Lock()
	s.calls = append(s.calls, messagesCall{header: r.Header.Clone(), body: body})
	s.mu.Unlock()
	text := "The capital of France is Paris."
	msgs, _ := json.Marshal(body["messages"])
	switch {
	case strings.Contains(fmt.Sprint(body["system"]), "JSON"):
		text = `{"city": "Paris", "country": "France"}`
	case strings.Contains(string(msgs), "Summarise"):
		text = "Cheap routes fail silently with HTTP 200. Judging replies and moving traffic step by step caught it."
	case strings.Contains(string(msgs), "my name"):
		text = "Your name is Ada."
	}
	q, _ := json.Marshal(text)
	if body["stream"] != true {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"msg_1","type":"message","role":"assistant","model":"claude-test","content":[{"type":"text","text":%s}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":20,"output_tokens":12}}`, q)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	for _, ev := range []string{
		`event: message_start` + "\n" + `data: {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"claude-test","stop_reason":null,"usage":{"input_tokens":20,"output_tokens":1}}}`,
		`event: content_block_start` + "\n" + `data: {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`event: content_block_delta` + "\n" + `data: {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":` + string(q) + `}}`,
		`event: content_block_stop` + "\n" + `data: {"type":"content_block_stop","index":0}`,
		`event: message_delta` + "\n" + `data: {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":12}}`,
		`event: message_stop` + "\n" + `data: {"type":"message_stop"}`,
	} {
		fmt.Fprint(w, ev+"\n\n")
	}
}

// TestMessagesAPI probes a route of Anthropic's Messages API (api:
// anthropic_messages) with every layer and the built-in prompts: each
// succeeds, and each call is written as the API wants it (its key in
// x-api-key, an anthropic-version, the system prompt apart, max_tokens
// always set, a temperature within its range).
func TestMessagesAPI(t *testing.T) {
	s := &messagesServer{}
	srv := httptest.NewServer(s)
	defer srv.Close()
	cfg := testConfig(t, srv.URL, "")
	cfg.Targets[0].API, cfg.Targets[0].Model = "anthropic_messages", "claude-test"
	reg := prometheus.NewRegistry()
	p, err := New(cfg, reg, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	for _, layer := range Layers {
		p.RunLayer(context.Background(), "free", layer)
	}
	got := gather(t, reg)
	for _, probe := range []string{"short_answer", "json_output", "summary", "multi_turn"} {
		if got[successKey(probe, E2E)] != 1 || got[verdictKey(probe, "ok", "")] != 1 {
			t.Errorf("%s: success %v, ok %v; series %v", probe, got[successKey(probe, E2E)], got[verdictKey(probe, "ok", "")], got)
		}
	}
	for _, bc := range boundaryCases {
		if got[successKey(bc.name, Boundary)] != 1 {
			t.Errorf("boundary %s failed", bc.name)
		}
	}
	if got[successKey("http", Liveness)] != 1 || got[successKey("models", Readiness)] != 1 {
		t.Errorf("liveness or readiness failed: %v", got)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.calls) != 4+len(boundaryCases) {
		t.Fatalf("%d calls of /v1/messages, want %d", len(s.calls), 4+len(boundaryCases))
	}
	for _, c := range s.calls {
		h, b := c.header, c.body
		if h.Get("x-api-key") != "sk-secret-123" || h.Get("Authorization") != "" || h.Get("anthropic-version") == "" || h.Get(ProbeHeader) == "" {
			t.Errorf("headers %v: want the key in x-api-key alone, an anthropic-version and the probe header", h)
		}
		if n, _ := b["max_tokens"].(float64); n < 1 {
			t.Errorf("max_tokens %v: the API requires it", b["max_tokens"])
		}
		for _, key := range []string{"response_format", "stream_options", "user"} {
			if _, ok := b[key]; ok {
				t.Errorf("%s sent: the Messages API has no such field (%v)", key, b)
			}
		}
		for _, m := range b["messages"].([]any) {
			if role := m.(map[string]any)["role"]; role != "user" && role != "assistant" {
				t.Errorf("a message of role %v: the system prompt goes in system", role)
			}
		}
		if temp, ok := b["temperature"].(float64); ok && temp > 1 {
			t.Errorf("temperature %v, over the API's 1", temp)
		}
		if md, _ := b["metadata"].(map[string]any); md["user_id"] != "hermes-probe" {
			t.Errorf("metadata %v, want user_id hermes-probe", b["metadata"])
		}
	}
	if sys := fmt.Sprint(s.calls[1].body["system"]); !strings.Contains(sys, "JSON") {
		t.Errorf("json_output's system prompt %q, want its system message", sys)
	}
}
