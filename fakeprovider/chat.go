package fakeprovider

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/hermes-failover/hermes/internal/faults"
)

// request is the part of a chat-completions request the provider reads.
type request struct {
	Model     string    `json:"model"`
	Messages  []message `json:"messages"`
	Stream    bool      `json:"stream"`
	MaxTokens *int      `json:"max_tokens"`
	// MaxCompletionTokens is OpenAI's newer name for the cap; with both
	// set, the smaller holds.
	MaxCompletionTokens *int           `json:"max_completion_tokens"`
	Temperature         *float64       `json:"temperature"`
	TopP                *float64       `json:"top_p"`
	Format              map[string]any `json:"response_format"`
}

type message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) {
	kind, ok := s.begin(w, r, r.PathValue("route"))
	if !ok {
		return
	}
	var req request
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		writeJSON(w, http.StatusBadRequest, apiError("invalid_request_error", "", "bad request: "+err.Error()))
		return
	}
	if kind == Unready || req.Model != Model {
		writeJSON(w, http.StatusNotFound, map[string]any{"error": map[string]any{"message": fmt.Sprintf("model %q not found", req.Model), "code": "model_not_found"}})
		return
	}
	if req.MaxTokens != nil && *req.MaxTokens < 1 || req.MaxCompletionTokens != nil && *req.MaxCompletionTokens < 1 || req.Temperature != nil && (*req.Temperature < 0 || *req.Temperature > 2) ||
		req.TopP != nil && (*req.TopP < 0 || *req.TopP > 1) {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"error": map[string]any{"message": "parameter out of range"}})
		return
	}
	if s.refuse(w, r, kind, req) {
		return
	}
	if kind == Slow && !s.sleep(r) {
		return
	}
	text, finish := answer(req.Messages), "stop"
	limit := 0
	if req.MaxTokens != nil {
		limit = *req.MaxTokens
	}
	if c := req.MaxCompletionTokens; c != nil && (limit == 0 || *c < limit) {
		limit = *c
	}
	if kind == MaxTokensCapped && (limit <= 0 || limit > faults.CappedTokens) {
		limit = faults.CappedTokens // below what was asked, without a word
	}
	if limit > 0 {
		if words := strings.Fields(text); len(words) > limit {
			text, finish = strings.Join(words[:limit], " "), "length"
		}
	}
	switch kind {
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
		s.stream(w, r, kind, text, finish, usage)
		return
	}
	switch kind {
	case ErrorTemplate:
		writeJSON(w, http.StatusOK, map[string]any{"error": map[string]any{"message": FallbackText, "code": "server_busy"}})
		return
	case ErrorInOK, ErrorAsStream:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, ErrorInOKBody)
		return
	case ErrorMidStream:
		// The provider's failure reported beside what it had written, as
		// OpenRouter reports it.
		writeJSON(w, http.StatusOK, map[string]any{
			"id": "chatcmpl-1", "object": "chat.completion", "model": Model,
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text[:len(text)/2]}, "finish_reason": "error"}},
			"error":   map[string]any{"message": "The upstream provider failed mid-completion.", "code": 502},
		})
		return
	case InvalidJSON, MalformedChunk:
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprintf(w, `{"id":"chatcmpl-1","choices":[{"index":0,"message":{"role":"assistant","content":%q`, text)
		return
	case Truncated:
		// Cut short of any cap the caller set, its usage counting what
		// was sent.
		text, finish = text[:len(text)/2], "length"
		usage["completion_tokens"] = len(strings.Fields(text))
		usage["total_tokens"] = usage["prompt_tokens"].(int) + usage["completion_tokens"].(int)
	case SlowFirstToken:
		if !s.sleep(r) {
			return
		}
	}
	body, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "model": Model,
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text}, "finish_reason": finish}},
		"usage":   usage,
	})
	body = append(body, '\n')
	w.Header().Set("Content-Type", "application/json")
	if kind == StreamCut || kind == Stall {
		// Half the body of a promised length, then a broken connection
		// or a wait for the client.
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body[:len(body)/2])
		flush(w)
		s.cutOrStall(r, kind)
		return
	}
	w.WriteHeader(http.StatusOK)
	w.Write(body)
}

// refuse answers the kinds that never reach a completion, and reports
// whether it did.
func (s *Server) refuse(w http.ResponseWriter, r *http.Request, kind Kind, req request) bool {
	switch kind {
	case StrictParams:
		if req.MaxTokens != nil && *req.MaxTokens < 2 || req.Temperature != nil && *req.Temperature > 1 || req.TopP != nil && *req.TopP < 0.01 {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": "parameter validation failed"})
			return true
		}
		return false
	case RateLimitedRetry, RateLimited, InternalError, Unavailable, ContextLength, ContentFilter:
		// The same replies as internal/faults' catalogue (the kinds have
		// its names).
		faults.WriteError(w, faults.Fault(kind))
	case ResetBeforeHeaders:
		faults.Reset(w)
	case NoResponse:
		s.wait(r)
	default:
		return false
	}
	return true
}

// cutOrStall ends a reply sent in part: the connection breaks (StreamCut)
// or the server waits for the client to give up (Stall).
func (s *Server) cutOrStall(r *http.Request, kind Kind) {
	if kind == Stall {
		s.wait(r)
		return
	}
	// The connection closes without the end of the body.
	panic(http.ErrAbortHandler)
}

// stream answers as server-sent events, one event per word.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, kind Kind, text, finish string, usage map[string]any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	send := func(v any) {
		b, _ := json.Marshal(v)
		fmt.Fprintf(w, "data: %s\n\n", b)
		flush(w)
	}
	chunk := func(delta map[string]any, finish any) map[string]any {
		return map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "model": Model,
			"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
	}
	switch kind {
	case ErrorTemplate:
		send(map[string]any{"error": map[string]any{"message": FallbackText, "code": "server_busy"}})
		return
	case ErrorInOK:
		fmt.Fprint(w, "data: "+ErrorInOKBody+"\n\n")
		flush(w)
		return
	case ErrorAsStream:
		fmt.Fprint(w, ErrorInOKBody)
		flush(w)
		return
	}
	send(chunk(map[string]any{"role": "assistant", "content": ""}, nil))
	s.mu.Lock()
	hold := s.hold
	s.mu.Unlock()
	if hold != nil {
		<-hold
	}
	if kind == SlowFirstToken && !s.sleep(r) {
		return
	}
	words := strings.SplitAfter(text, " ")
	if text == "" {
		words = nil
	}
	for i, word := range words {
		if i >= len(words)/2 {
			switch kind {
			case Truncated:
				return // cut before [DONE]
			case StreamCut, Stall:
				s.cutOrStall(r, kind)
				return
			case ErrorMidStream:
				send(map[string]any{"error": map[string]any{"message": "The upstream provider failed mid-stream.", "type": "server_error", "code": 502}})
				return
			}
		}
		if (kind == InvalidJSON || kind == MalformedChunk) && i == 1 {
			fmt.Fprintf(w, "data: {\"choices\":[{\"delta\":{\"content\":\n\n")
			continue
		}
		send(chunk(map[string]any{"content": word}, nil))
	}
	if kind == Truncated {
		return
	}
	send(chunk(map[string]any{}, finish))
	send(map[string]any{"id": "chatcmpl-1", "object": "chat.completion.chunk", "choices": []any{}, "usage": usage})
	if kind != NoDone {
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}

func flush(w http.ResponseWriter) { _ = http.NewResponseController(w).Flush() }

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
