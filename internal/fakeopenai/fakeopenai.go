// Package fakeopenai is a real HTTP server, for tests, that speaks the
// OpenAI chat-completions API (plain and streamed as server-sent events)
// and /v1/models, and that can be switched between healthy and the ways a
// cheap route fails: truncated, an error template inside HTTP 200, a
// fallback phrase, empty, too short, invalid JSON, slow, 5xx, a model that
// is not listed, a dropped connection, and strict parameter validation
// (422 on edge values).
package fakeopenai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Mode is how the server answers.
type Mode string

// The modes.
const (
	Healthy       Mode = "healthy"        // a correct answer
	Truncated     Mode = "truncated"      // plain: finish_reason length; stream: cut before [DONE]
	ErrorTemplate Mode = "error_template" // HTTP 200 with an error object ("系统繁忙") instead of a completion
	Fallback      Mode = "fallback"       // a completion whose content is a fallback phrase
	Empty         Mode = "empty"          // a completion with empty content
	TooShort      Mode = "too_short"      // a completion of one character
	InvalidJSON   Mode = "invalid_json"   // a body (or event) that is not JSON
	Slow          Mode = "slow"           // a healthy answer after Delay
	ServerError   Mode = "5xx"            // HTTP 503
	Unready       Mode = "unready"        // /v1/models without the model; completions answer 404
	Drop          Mode = "drop"           // the connection is closed without an answer
	StrictParams  Mode = "strict_params"  // healthy, but 422 for temperature > 1, top_p < 0.01 or max_tokens < 2
)

// Modes lists every mode.
var Modes = []Mode{Healthy, Truncated, ErrorTemplate, Fallback, Empty, TooShort, InvalidJSON, Slow, ServerError, Unready, Drop, StrictParams}

// Model is the model the server lists and serves.
const Model = "fake-model"

// FallbackText is what Fallback mode answers.
const FallbackText = "系统繁忙，请稍后重试"

// Server is a running fake API on 127.0.0.1. Its base URL for clients is
// URL + "/v1".
type Server struct {
	URL string
	// APIKey, when set before requests arrive, is required as a bearer token.
	APIKey string

	mu       sync.Mutex
	mode     Mode
	delay    time.Duration
	hold     chan struct{}
	requests map[string]int
	headers  []http.Header

	srv *http.Server
}

// Start starts a server in Healthy mode; it is closed when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{URL: "http://" + l.Addr().String(), mode: Healthy, delay: 3 * time.Second, requests: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := s.begin(w, r); ok {
			http.NotFound(w, r)
		}
	})
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(l) }()
	t.Cleanup(func() {
		s.Release()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = s.srv.Shutdown(ctx)
		_ = s.srv.Close()
	})
	return s
}

// SetMode switches how the server answers from the next request on.
func (s *Server) SetMode(m Mode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mode = m
}

// Mode is the current mode.
func (s *Server) Mode() Mode {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode
}

// SetDelay sets how long Slow mode waits (default 3s).
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// Hold makes streamed answers stop after their first event until Release.
func (s *Server) Hold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold = make(chan struct{})
}

// Release lets held streams go on.
func (s *Server) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hold != nil {
		close(s.hold)
		s.hold = nil
	}
}

// Requests is how many requests reached path ("/v1/models", "/v1/chat/completions").
func (s *Server) Requests(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[path]
}

// Headers are the headers of every request received, in order.
func (s *Server) Headers() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.headers...)
}

func (s *Server) begin(w http.ResponseWriter, r *http.Request) (Mode, bool) {
	s.mu.Lock()
	s.requests[r.URL.Path]++
	s.headers = append(s.headers, r.Header.Clone())
	mode, key := s.mode, s.APIKey
	s.mu.Unlock()
	if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
		writeJSON(w, http.StatusUnauthorized, map[string]any{"error": map[string]any{"message": "invalid api key", "type": "invalid_request_error"}})
		return mode, false
	}
	switch mode {
	case Drop:
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
			}
		}
		return mode, false
	case ServerError:
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"error": map[string]any{"message": "upstream overloaded", "type": "server_error"}})
		return mode, false
	}
	return mode, true
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	mode, ok := s.begin(w, r)
	if !ok {
		return
	}
	data := []any{map[string]any{"id": "other-model", "object": "model", "owned_by": "fake"}}
	if mode != Unready {
		data = append(data, map[string]any{"id": Model, "object": "model", "owned_by": "fake"})
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

// request is the part of a chat-completions request the server reads.
type request struct {
	Model       string         `json:"model"`
	Messages    []message      `json:"messages"`
	Stream      bool           `json:"stream"`
	MaxTokens   *int           `json:"max_tokens"`
	Temperature *float64       `json:"temperature"`
	TopP        *float64       `json:"top_p"`
	Format      map[string]any `json:"response_format"`
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	mode, ok := s.begin(w, r)
	if !ok {
		return
	}
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": "bad request: " + err.Error()}})
		return
	}
	if mode == Unready || req.Model != Model {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{"message": fmt.Sprintf("model %q not found", req.Model), "code": "model_not_found"}})
		return
	}
	if req.MaxTokens != nil && *req.MaxTokens < 1 || req.Temperature != nil && (*req.Temperature < 0 || *req.Temperature > 2) ||
		req.TopP != nil && (*req.TopP < 0 || *req.TopP > 1) {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"error": map[string]any{"message": "parameter out of range"}})
		return
	}
	if mode == StrictParams && (req.MaxTokens != nil && *req.MaxTokens < 2 || req.Temperature != nil && *req.Temperature > 1 || req.TopP != nil && *req.TopP < 0.01) {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": "parameter validation failed"})
		return
	}
	if mode == Slow {
		s.mu.Lock()
		d := s.delay
		s.mu.Unlock()
		select {
		case <-time.After(d):
		case <-r.Context().Done():
			return
		}
	}
	text, finish := answer(req.Messages), "stop"
	if req.MaxTokens != nil {
		if words := strings.Fields(text); len(words) > *req.MaxTokens {
			text, finish = strings.Join(words[:*req.MaxTokens], " "), "length"
		}
	}
	switch mode {
	case Fallback:
		text = FallbackText
	case Empty:
		text = ""
	case TooShort:
		text = "P"
	}
	usage := map[string]any{"prompt_tokens": promptTokens(req.Messages), "completion_tokens": len(strings.Fields(text))}
	usage["total_tokens"] = usage["prompt_tokens"].(int) + usage["completion_tokens"].(int)
	if req.Stream {
		s.stream(w, mode, text, finish, usage)
		return
	}
	switch mode {
	case ErrorTemplate:
		writeJSON(w, http.StatusOK, map[string]any{"error": map[string]any{"message": FallbackText, "code": "server_busy"}})
		return
	case InvalidJSON:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-1","choices":[{"index":0,"message":{"role":"assistant","content":%q`, text)
		return
	case Truncated:
		text, finish = text[:len(text)/2], "length"
	}
	writeJSON(w, http.StatusOK, map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "model": Model,
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text}, "finish_reason": finish}},
		"usage":   usage,
	})
}

// stream answers as server-sent events, one event per word.
func (s *Server) stream(w http.ResponseWriter, mode Mode, text, finish string, usage map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	fl, _ := w.(http.Flusher)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	if mode == ErrorTemplate {
		send(map[string]any{"error": map[string]any{"message": FallbackText, "code": "server_busy"}})
		return
	}
	send(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	s.mu.Lock()
	hold := s.hold
	s.mu.Unlock()
	if hold != nil {
		<-hold
	}
	words := strings.SplitAfter(text, " ")
	if text == "" {
		words = nil
	}
	for i, word := range words {
		if mode == Truncated && i >= len(words)/2 {
			return // cut before [DONE]
		}
		if mode == InvalidJSON && i == 1 {
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\n\n")
			continue
		}
		send(chunk(map[string]any{"content": word}, nil))
	}
	if mode == Truncated {
		return
	}
	send(chunk(map[string]any{}, finish))
	send(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": []any{}, "usage": usage})
	fmt.Fprint(w, "data: [DONE]\n\n")
}

// answer is the healthy answer to the last user message.
func answer(msgs []message) string {
	var last string
	for _, m := range msgs {
		if m.Role == "user" {
			last = strings.ToLower(m.Content)
		}
	}
	switch {
	case strings.Contains(last, "summar"):
		return "The text explains that cheap model routes can fail silently: they answer HTTP 200 " +
			"while the replies are truncated, broken or canned, so health checks must judge the content."
	case strings.Contains(last, "my name"):
		return "Your name is Ada."
	case strings.Contains(last, "json"):
		return `{"city": "Paris", "country": "France"}`
	case strings.Contains(last, "capital"):
		return "Paris is the capital of France."
	}
	return "Hello! How can I help you today?"
}

func promptTokens(msgs []message) int {
	n := 0
	for _, m := range msgs {
		n += len(strings.Fields(m.Content))
	}
	return n
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	if err := json.NewEncoder(w).Encode(v); err != nil && !errors.Is(err, http.ErrHandlerTimeout) {
		return
	}
}
