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

	"github.com/hermes-failover/hermes/gateway/validate"
)

// apiServer answers as a provider of one API does (GET /v1/models, POST
// path, plain and streamed, written by reply), a fitting answer to each
// built-in prompt, and keeps each call's headers and body.
type apiServer struct {
	path  string
	reply func(w http.ResponseWriter, text string, stream bool)

	mu    sync.Mutex
	calls []apiCall
}

type apiCall struct {
	header http.Header
	body   map[string]any
}

func (s *apiServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/v1":
		return
	case "/v1/models":
		fmt.Fprint(w, `{"object":"list","data":[{"type":"model","id":"test-model"}],"has_more":false}`)
		return
	case s.path:
	default:
		http.NotFound(w, r)
		return
	}
	var body map[string]any
	b, _ := io.ReadAll(r.Body)
	_ = json.Unmarshal(b, &body)
	s.mu.Lock()
	s.calls = append(s.calls, apiCall{header: r.Header.Clone(), body: body})
	s.mu.Unlock()
	text := "The capital of France is Paris."
	sent := string(b)
	switch {
	case strings.Contains(sent, "Summarise"): // its text says JSON too
		text = "Cheap routes fail silently with HTTP 200. Judging replies and moving traffic step by step caught it."
	case strings.Contains(sent, "JSON"):
		text = `{"city": "Paris", "country": "France"}`
	case strings.Contains(sent, "my name"):
		text = "Your name is Ada."
	}
	s.reply(w, text, body["stream"] == true)
}

// events writes a stream of typed events (event: and data:).
func events(w http.ResponseWriter, evs ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	for _, ev := range evs {
		typ, data, _ := strings.Cut(ev, " ")
		fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, data)
	}
}

// messagesReply writes a reply of Anthropic's Messages API.
func messagesReply(w http.ResponseWriter, text string, stream bool) {
	q, _ := json.Marshal(text)
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"msg_1","type":"message","role":"assistant","model":"test-model","content":[{"type":"text","text":%s}],"stop_reason":"end_turn","stop_sequence":null,"usage":{"input_tokens":20,"output_tokens":12}}`, q)
		return
	}
	events(w,
		`message_start {"type":"message_start","message":{"id":"msg_1","type":"message","role":"assistant","content":[],"model":"test-model","stop_reason":null,"usage":{"input_tokens":20,"output_tokens":1}}}`,
		`content_block_start {"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`,
		`content_block_delta {"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":`+string(q)+`}}`,
		`content_block_stop {"type":"content_block_stop","index":0}`,
		`message_delta {"type":"message_delta","delta":{"stop_reason":"end_turn","stop_sequence":null},"usage":{"output_tokens":12}}`,
		`message_stop {"type":"message_stop"}`)
}

// responsesReply writes a reply of OpenAI's Responses API.
func responsesReply(w http.ResponseWriter, text string, stream bool) {
	q, _ := json.Marshal(text)
	resp := `{"id":"resp_1","object":"response","status":"completed","error":null,"incomplete_details":null,"model":"test-model",` +
		`"output":[{"type":"message","id":"msg_1","status":"completed","role":"assistant","content":[{"type":"output_text","text":` + string(q) + `,"annotations":[]}]}],` +
		`"usage":{"input_tokens":20,"output_tokens":12,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":32}}`
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, resp)
		return
	}
	events(w,
		`response.created {"type":"response.created","response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}}`,
		`response.output_item.added {"type":"response.output_item.added","output_index":0,"item":{"id":"msg_1","type":"message","role":"assistant","content":[]}}`,
		`response.output_text.delta {"type":"response.output_text.delta","item_id":"msg_1","output_index":0,"content_index":0,"delta":`+string(q)+`}`,
		`response.completed {"type":"response.completed","response":`+resp+`}`)
}

// probeAPI probes a route of api served by s with every layer and the
// built-in prompts, and fails t unless each probe succeeds; it returns
// the calls s got, in order.
func probeAPI(t *testing.T, api string, s *apiServer) []apiCall {
	t.Helper()
	srv := httptest.NewServer(s)
	defer srv.Close()
	cfg := testConfig(t, srv.URL, "")
	cfg.Targets[0].API, cfg.Targets[0].Model = validate.Format(api), "test-model"
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
			t.Errorf("%s: success %v, ok %v", probe, got[successKey(probe, E2E)], got[verdictKey(probe, "ok", "")])
		}
	}
	for _, bc := range boundaryCases {
		if got[successKey(bc.name, Boundary)] != 1 {
			t.Errorf("boundary %s failed", bc.name)
		}
	}
	if got[successKey("http", Liveness)] != 1 || got[successKey("models", Readiness)] != 1 {
		t.Errorf("liveness %v, readiness %v", got[successKey("http", Liveness)], got[successKey("models", Readiness)])
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.calls) != 4+len(boundaryCases) {
		t.Fatalf("%d calls of %s, want %d", len(s.calls), s.path, 4+len(boundaryCases))
	}
	return s.calls
}

// TestMessagesAPI probes a route of Anthropic's Messages API (api:
// anthropic_messages): each probe succeeds, and each call is written as
// the API wants it (its key in x-api-key, an anthropic-version, the
// system prompt apart, max_tokens always set, a temperature within its
// range).
func TestMessagesAPI(t *testing.T) {
	calls := probeAPI(t, "anthropic_messages", &apiServer{path: "/v1/messages", reply: messagesReply})
	for _, c := range calls {
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
	if sys := fmt.Sprint(calls[1].body["system"]); !strings.Contains(sys, "JSON") {
		t.Errorf("json_output's system prompt %q, want its system message", sys)
	}
}

// TestResponsesAPI probes a route of OpenAI's Responses API (api:
// openai_responses): each probe succeeds, and each call is written as the
// API wants it (the key as a bearer token, the system prompt in
// instructions, the messages as input, response_format as text.format,
// max_output_tokens at least 16).
func TestResponsesAPI(t *testing.T) {
	calls := probeAPI(t, "openai_responses", &apiServer{path: "/v1/responses", reply: responsesReply})
	for _, c := range calls {
		h, b := c.header, c.body
		if h.Get("Authorization") != "Bearer sk-secret-123" || h.Get("x-api-key") != "" || h.Get(ProbeHeader) == "" {
			t.Errorf("headers %v: want the key as a bearer token and the probe header", h)
		}
		for _, key := range []string{"messages", "max_tokens", "response_format", "stream_options"} {
			if _, ok := b[key]; ok {
				t.Errorf("%s sent: the Responses API has no such field (%v)", key, b)
			}
		}
		if _, ok := b["input"].([]any); !ok {
			t.Errorf("input %v, want the prompt's messages", b["input"])
		}
		if n, ok := b["max_output_tokens"].(float64); ok && n < 16 {
			t.Errorf("max_output_tokens %v, under the API's 16", n)
		}
	}
	if sys := fmt.Sprint(calls[1].body["instructions"]); !strings.Contains(sys, "JSON") {
		t.Errorf("json_output's instructions %q, want its system message", sys)
	}
	if format := fmt.Sprint(calls[1].body["text"]); !strings.Contains(format, "json_object") {
		t.Errorf("json_output's text %q, want its response_format as text.format", format)
	}
}
