package proxy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hermes-failover/hermes/gateway/validate"
)

// messagesUpstream serves Anthropic's Messages API as Claude, and a relay
// in front of it, answer: /healthy whole; /overloaded an overloaded_error
// event after the first text (HTTP 200); /cut a stream cut after its first
// text, or a message that max_tokens ended short of the caller's cap;
// /capped a message the caller's own max_tokens ended. It keeps the
// x-api-key each request carried.
func messagesUpstream(t *testing.T) (string, *seen) {
	s := &seen{}
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Stream    bool `json:"stream"`
			MaxTokens int  `json:"max_tokens"`
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &req)
		s.mu.Lock()
		s.reqs = append(s.reqs, r)
		s.mu.Unlock()
		if strings.HasSuffix(r.URL.Path, "/count_tokens") {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"input_tokens":14}`)
			return
		}
		kind := strings.Split(strings.TrimPrefix(r.URL.Path, "/"), "/")[0]
		stop, output := "end_turn", 12
		switch kind {
		case "cut":
			stop, output = "max_tokens", 12
		case "capped":
			stop, output = "max_tokens", req.MaxTokens
		}
		if !req.Stream {
			w.Header().Set("Content-Type", "application/json")
			if kind == "overloaded" {
				fmt.Fprint(w, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
				return
			}
			fmt.Fprintf(w, `{"id":"msg_01","type":"message","role":"assistant","model":"claude-sonnet-4-5","content":[{"type":"text","text":"Hello! How can I help you today?"}],"stop_reason":%q,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":%d}}`, stop, output)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		flush := http.NewResponseController(w).Flush
		ev := func(typ, data string) {
			fmt.Fprintf(w, "event: %s\ndata: %s\n\n", typ, data)
			_ = flush()
		}
		ev("message_start", `{"type":"message_start","message":{"id":"msg_01","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":10,"output_tokens":1}}}`)
		ev("content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		ev("ping", `{"type": "ping"}`)
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello!"}}`)
		switch kind {
		case "overloaded":
			ev("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
			return
		case "cut":
			return
		}
		ev("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" How can I help you today?"}}`)
		ev("content_block_stop", `{"type":"content_block_stop","index":0}`)
		ev("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, stop, output))
		ev("message_stop", `{"type":"message_stop"}`)
	}))
	return base, s
}

// TestMessagesAPI: a route whose validation format is
// anthropic_messages judges POST …/v1/messages by default, plain and
// streamed, with the verdicts of a chat completion; its token counting
// passes unrecorded; the caller's x-api-key reaches the upstream
// unchanged and is on no series.
func TestMessagesAPI(t *testing.T) {
	up, s := messagesUpstream(t)
	route := testRoute("claude", up, validate.Rules{Format: validate.FormatAnthropicMessages})
	base, reg, _ := startProxy(t, &Config{Routes: []Route{route}}, nil)
	send := func(kind, path string, stream bool, maxTokens int) reply {
		t.Helper()
		body := fmt.Sprintf(`{"model":"claude-sonnet-4-5","max_tokens":%d,"stream":%v,"messages":[{"role":"user","content":"Hello"}]}`, maxTokens, stream)
		req, err := http.NewRequest(http.MethodPost, base+"/claude/"+kind+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("x-api-key", secret)
		req.Header.Set("anthropic-version", "2023-06-01")
		got := call(http.DefaultClient, req)
		if got.err != nil || got.status != http.StatusOK {
			t.Fatalf("%s%s stream=%v: %d %v", kind, path, stream, got.status, got.err)
		}
		if key := s.last().Header.Get("x-api-key"); key != secret {
			t.Fatalf("the upstream got x-api-key %q", key)
		}
		return got
	}
	want := map[string]float64{}
	for _, tc := range []struct {
		kind      string
		maxTokens int
		verdict   string
		reason    string
	}{
		{"healthy", 1024, "ok", ""},
		{"overloaded", 1024, "soft_fail", "error_body"},
		{"cut", 1024, "soft_fail", "truncated"},
		{"capped", 16, "ok", ""},
	} {
		for _, stream := range []bool{false, true} {
			got := send(tc.kind, "/v1/messages?beta=true", stream, tc.maxTokens)
			if stream && !bytes.HasPrefix(got.body, []byte("event: message_start\n")) {
				t.Fatalf("%s: the stream did not pass as sent: %q", tc.kind, got.body)
			}
			want[fmt.Sprintf(`llm_gateway_requests_total{code="200",reason=%q,route="claude",verdict=%q}`, tc.reason, tc.verdict)]++
		}
	}
	send("healthy", "/v1/messages/count_tokens", false, 0)
	for series, n := range want {
		waitSeries(t, reg, fmt.Sprintf("%s %v", series, n))
	}
	page := scrape(t, reg)
	if strings.Contains(page, secret) {
		t.Error("the x-api-key is on /metrics")
	}
	var total float64
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(line, "llm_gateway_requests_total{") {
			var n float64
			fmt.Sscan(line[strings.LastIndexByte(line, ' ')+1:], &n)
			total += n
		}
	}
	if total != 8 {
		t.Errorf("%v requests recorded, want the 8 calls of /v1/messages (count_tokens is not one):\n%s", total, page)
	}
}
