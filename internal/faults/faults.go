// Package faults is a real HTTP server, for tests, that answers OpenAI
// chat completions with one behaviour of a fault catalogue per path: the
// faults a route to a model provider shows (429 with and without
// Retry-After, 500, 503, a reset before the headers, no response, a slow
// first token, a stream cut or stalled, a malformed chunk, a stream
// without [DONE], a context length exceeded, a content-filter rejection,
// an error template inside HTTP 200, max_tokens silently capped), each
// plain or streamed as the
// request's "stream" asks, plus the hostile replies the prober must
// survive (one that never ends, one far over its size limit, one whose
// usage claims millions of tokens).
//
// A client reaches a fault at its base URL, Server.BaseURL(fault), which
// ends in /v1 like an OpenAI-compatible API; /v1/models lists Model there.
package faults

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Fault is one behaviour of the server.
type Fault string

// The catalogue.
const (
	Healthy            Fault = "healthy"              // a correct answer
	RateLimitedRetry   Fault = "429_retry_after"      // HTTP 429 with Retry-After
	RateLimited        Fault = "429"                  // HTTP 429 without Retry-After
	InternalError      Fault = "500"                  // HTTP 500
	Unavailable        Fault = "503"                  // HTTP 503
	ResetBeforeHeaders Fault = "reset_before_headers" // the connection is reset before any header
	NoResponse         Fault = "no_response"          // no answer at all until the client gives up
	SlowFirstToken     Fault = "slow_first_token"     // a healthy answer whose first token comes after FirstTokenDelay
	StreamCut          Fault = "stream_cut"           // the connection breaks in the middle of the body
	Stall              Fault = "stall"                // the body stops in the middle until the client gives up
	MalformedChunk     Fault = "malformed_chunk"      // stream: one event is not JSON; plain: the body is not JSON
	NoDone             Fault = "no_done"              // stream: complete (finish_reason stop) but no data: [DONE]; plain: healthy
	ContextLength      Fault = "context_length"       // HTTP 400 context_length_exceeded
	ContentFilter      Fault = "content_filter"       // HTTP 400 content_policy_violation
	ErrorInOK          Fault = "error_in_200"         // HTTP 200 whose body (stream: first and only event) is {"code":500,"msg":"系统繁忙，请稍后重试"}
	ErrorAsStream      Fault = "error_as_stream"      // streamed: HTTP 200 and text/event-stream, whose body is ErrorTemplate without data:, as a relay that fails a streamed request sends it; plain: as error_in_200
	MaxTokensCapped    Fault = "max_tokens_capped"    // a completion ended at CappedTokens words (finish_reason length), whatever max_tokens asked
	ErrorMidStream     Fault = "error_mid_stream"     // streamed: HTTP 200, the first words, then an error event (OpenAI's {"error":…}; the Messages API's overloaded_error); plain: the provider's failure reported beside the choices with finish_reason error (OpenRouter), or the Messages API's error object
	Endless            Fault = "endless"              // far more content than max_tokens, then no end until the client gives up
	Oversized          Fault = "oversized"            // a complete reply of OversizedBytes
	GzipBomb           Fault = "gzip_bomb"            // a plain reply of OversizedBytes, sent gzip-compressed to a few kB
	UsageFlood         Fault = "usage_flood"          // a healthy answer whose usage claims FloodTokens
)

// Catalogue lists the faults every path is tested with.
var Catalogue = []Fault{
	Healthy, RateLimitedRetry, RateLimited, InternalError, Unavailable, ResetBeforeHeaders, NoResponse,
	SlowFirstToken, StreamCut, Stall, MalformedChunk, NoDone, ContextLength, ContentFilter, ErrorInOK, ErrorAsStream,
	MaxTokensCapped, ErrorMidStream,
}

// Model is the model the server lists and serves.
const Model = "fault-model"

// Content is what a healthy answer says.
const Content = "Hello! I am here and ready to help you today."

// ContentTokens is how many tokens Content counts as (its usage says
// so). A request whose max_tokens (or max_completion_tokens) is smaller
// gets Content's first max_tokens words, with finish_reason length and a
// usage of max_tokens, as a provider ends a completion at the caller's
// own cap.
const ContentTokens = 11

// CappedTokens is where MaxTokensCapped ends every completion, as a
// provider does that caps max_tokens below what was asked without
// saying so (in the incident write-ups, a free route whose max_tokens
// range shrank silently).
const CappedTokens = 4

// ErrorTemplate is the body ErrorInOK sends with HTTP 200.
const ErrorTemplate = `{"code":500,"msg":"系统繁忙，请稍后重试"}`

// FloodTokens is the total_tokens UsageFlood's usage claims.
const FloodTokens = 40_000_000

// Sizes of the hostile replies.
const (
	EndlessBytes   = 256 << 10 // what Endless sends before it stalls
	OversizedBytes = 1 << 20   // the content of Oversized
)

// Server is a running fault server on 127.0.0.1.
type Server struct {
	URL string
	// FirstTokenDelay is how long SlowFirstToken holds its first token
	// (default 200ms); set it before requests arrive.
	FirstTokenDelay time.Duration
	// Compress sends every JSON reply (not a stream) in the coding the
	// request's Accept-Encoding asks for (br, zstd or gzip, in that
	// order of preference), as a provider behind Cloudflare does; set it
	// before requests arrive.
	Compress bool

	srv  *http.Server
	done chan struct{}
}

// Start starts a server; it is closed when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{URL: "http://" + l.Addr().String(), FirstTokenDelay: 200 * time.Millisecond, done: make(chan struct{})}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{fault}/v1/models", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": []any{map[string]any{"id": Model, "object": "model"}}})
	})
	mux.HandleFunc("POST /{fault}/v1/chat/completions", s.compressed(s.chat))
	mux.HandleFunc("POST /{fault}/v1/messages", s.compressed(s.messages))
	mux.HandleFunc("POST /{fault}/v1/responses", s.compressed(s.responses))
	mux.HandleFunc("GET /{fault}/v1", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusOK) })
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(l) }()
	t.Cleanup(func() {
		close(s.done)
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = s.srv.Shutdown(ctx)
		_ = s.srv.Close()
	})
	return s
}

// compressed is serve, its JSON replies compressed when s.Compress is
// set.
func (s *Server) compressed(serve http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.Compress {
			serve(w, r)
			return
		}
		cw := &compressor{ResponseWriter: w, coding: preferredCoding(r.Header.Values("Accept-Encoding"))}
		serve(cw, r)
		cw.close() // not on a panic: a cut reply stays cut inside its coding too
	}
}

// BaseURL is the base URL (ending in /v1) of a fault: its chat
// completions, Messages API and Responses API are beneath it.
func (s *Server) BaseURL(f Fault) string { return s.URL + "/" + string(f) + "/v1" }

// wait blocks until the client has gone or the server is closing: the
// server never gives up first.
func (s *Server) wait(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.done:
	}
}

// dialect shapes the catalogue's replies in one API: chat completions
// (chatAPI), Anthropic's Messages API (messagesAPI, messages.go) or
// OpenAI's Responses API (responsesAPI, responses.go).
type dialect interface {
	// notJSON answers a request whose body is not JSON.
	notJSON(w http.ResponseWriter)
	// writeError writes the reply of a fault that is an HTTP error, and
	// reports whether f is one.
	writeError(w http.ResponseWriter, f Fault) bool
	// capped writes a healthy reply of Content held to a cap of limit
	// tokens (none when not positive): short of ContentTokens, its first
	// limit words, ended by the cap. noEnd leaves a stream without its
	// last event ([DONE], message_stop); started says its header and
	// first event are sent.
	capped(w http.ResponseWriter, stream, noEnd, started bool, limit int)
	// startStream sends a stream's header and first event.
	startStream(w http.ResponseWriter)
	// half writes half a reply: a plain body of a promised length, or a
	// stream's first events.
	half(w http.ResponseWriter, stream bool)
	// malformed writes a reply whose body, or one of whose events, is
	// not JSON.
	malformed(w http.ResponseWriter, stream bool)
	// failed writes a reply the provider failed in the middle of: a
	// stream's first words, then an error event; a plain reply that
	// reports the failure inside HTTP 200.
	failed(w http.ResponseWriter, stream bool)
	// other answers the faults of this API alone, and reports whether f
	// is one.
	other(s *Server, w http.ResponseWriter, r *http.Request, f Fault, stream bool, limit int) bool
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request) { s.serveFault(w, r, chatAPI{}) }

// serveFault answers a call with the fault its path names, in d's shapes.
func (s *Server) serveFault(w http.ResponseWriter, r *http.Request, d dialect) {
	var req struct {
		Stream              bool `json:"stream"`
		MaxTokens           int  `json:"max_tokens"`
		MaxCompletionTokens int  `json:"max_completion_tokens"`
		MaxOutputTokens     int  `json:"max_output_tokens"` // the Responses API's
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		d.notJSON(w)
		return
	}
	f := Fault(r.PathValue("fault"))
	if d.writeError(w, f) {
		return
	}
	limit := req.MaxTokens
	for _, n := range []int{req.MaxCompletionTokens, req.MaxOutputTokens} {
		if n > 0 && (limit <= 0 || n < limit) {
			limit = n
		}
	}
	switch f {
	case Healthy, NoDone:
		d.capped(w, req.Stream, f == NoDone, false, limit)
	case MaxTokensCapped:
		if limit <= 0 || limit > CappedTokens {
			limit = CappedTokens
		}
		d.capped(w, req.Stream, false, false, limit)
	case ResetBeforeHeaders:
		Reset(w)
	case NoResponse:
		s.wait(r)
	case SlowFirstToken:
		if req.Stream {
			d.startStream(w)
		}
		select {
		// The delay is the fault itself, not a wait for a condition.
		case <-time.After(s.FirstTokenDelay):
		case <-r.Context().Done():
			return
		}
		d.capped(w, req.Stream, false, true, limit)
	case StreamCut, Stall:
		d.half(w, req.Stream)
		flush(w)
		if f == Stall {
			s.wait(r)
			return
		}
		// The server closes the connection without ending the body (no
		// last chunk, fewer bytes than Content-Length).
		panic(http.ErrAbortHandler)
	case MalformedChunk:
		d.malformed(w, req.Stream)
	case ErrorMidStream:
		d.failed(w, req.Stream)
	case ErrorInOK:
		if req.Stream {
			d.startStream(w)
			fmt.Fprint(w, "data: "+ErrorTemplate+"\n\n")
			return
		}
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, ErrorTemplate)
	case ErrorAsStream:
		if req.Stream {
			streamHeader(w)
		} else {
			w.Header().Set("Content-Type", "application/json")
		}
		fmt.Fprint(w, ErrorTemplate)
	default:
		if !d.other(s, w, r, f, req.Stream, limit) {
			http.NotFound(w, r)
		}
	}
}

// chatAPI is the dialect of OpenAI-compatible chat completions.
type chatAPI struct{}

func (chatAPI) notJSON(w http.ResponseWriter) {
	writeJSON(w, http.StatusBadRequest, apiError("invalid_request_error", "", "the body is not JSON"))
}

func (chatAPI) writeError(w http.ResponseWriter, f Fault) bool { return WriteError(w, f) }

func (chatAPI) capped(w http.ResponseWriter, stream, noEnd, started bool, limit int) {
	answerCapped(w, stream, noEnd, started, limit)
}

func (chatAPI) startStream(w http.ResponseWriter) { startStream(w) }

func (chatAPI) half(w http.ResponseWriter, stream bool) {
	if stream {
		startStream(w)
		event(w, chunk("Hello! I am "))
		event(w, chunk("here and"))
		return
	}
	body := fmt.Sprintf(`{"choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":"stop"}]}`, Content)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	fmt.Fprint(w, body[:len(body)/2])
}

func (chatAPI) malformed(w http.ResponseWriter, stream bool) {
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"Hel`+"\n")
		return
	}
	startStream(w)
	event(w, chunk("Hello! "))
	fmt.Fprint(w, `data: {"choices":[{"index":0,"delta":{"content":"I am`+"\n\n")
	event(w, chunk("here."))
	event(w, finish("stop"))
	fmt.Fprint(w, "data: [DONE]\n\n")
}

func (chatAPI) failed(w http.ResponseWriter, stream bool) {
	if !stream {
		writeJSON(w, http.StatusOK, map[string]any{
			"id": "chatcmpl-fault", "object": "chat.completion", "model": Model,
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": "Hello! I am"}, "finish_reason": "error"}},
			"error":   map[string]any{"message": "The upstream provider failed mid-completion.", "code": 502},
		})
		return
	}
	startStream(w)
	event(w, chunk("Hello! I am "))
	event(w, `{"error":{"message":"The upstream provider failed mid-stream.","type":"server_error","code":502}}`)
}

func (chatAPI) other(s *Server, w http.ResponseWriter, r *http.Request, f Fault, stream bool, _ int) bool {
	switch f {
	case Endless:
		if stream {
			startStream(w)
			for sent := 0; sent < EndlessBytes; sent += 1024 {
				event(w, chunk(strings.Repeat("x", 1024)))
			}
		} else {
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"`+strings.Repeat("x", EndlessBytes))
		}
		flush(w)
		s.wait(r)
	case Oversized:
		answer(w, stream, false, false, strings.Repeat("x", OversizedBytes))
	case UsageFlood:
		answerUsage(w, stream, false, false, Content,
			fmt.Sprintf(`{"prompt_tokens":12,"completion_tokens":%d,"total_tokens":%d}`, FloodTokens-12, FloodTokens))
	case GzipBomb:
		// What the client reads once it inflates the body is what counts:
		// the compressed reply is a few kB.
		var plain bytes.Buffer
		answer(&bodyWriter{header: http.Header{}, buf: &plain}, false, false, false, strings.Repeat("x", OversizedBytes))
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		zw.Write(plain.Bytes())
		zw.Close()
	default:
		return false
	}
	return true
}

// answer writes a healthy completion of content, plain or streamed (then
// without [DONE] when noDone; started: its header and role chunk are sent).
func answer(w http.ResponseWriter, stream, noDone, started bool, content string) {
	answerUsage(w, stream, noDone, started, content, `{"prompt_tokens":12,"completion_tokens":11,"total_tokens":23}`)
}

// answerCapped is answer of Content held to a cap of limit tokens (none
// when not positive): past ContentTokens, the whole of it; short of
// them, its first limit words, with finish_reason length, and a usage
// that counts them.
func answerCapped(w http.ResponseWriter, stream, noDone, started bool, limit int) {
	if limit <= 0 || limit >= ContentTokens {
		answer(w, stream, noDone, started, Content)
		return
	}
	content := strings.Join(strings.Fields(Content)[:limit], " ")
	answerFinish(w, stream, noDone, started, content, "length",
		fmt.Sprintf(`{"prompt_tokens":12,"completion_tokens":%d,"total_tokens":%d}`, limit, 12+limit))
}

// answerUsage is answer with usage, a JSON object, as the reply's usage.
func answerUsage(w http.ResponseWriter, stream, noDone, started bool, content, usage string) {
	answerFinish(w, stream, noDone, started, content, "stop", usage)
}

// answerFinish is answerUsage with the finish_reason.
func answerFinish(w http.ResponseWriter, stream, noDone, started bool, content, finishReason, usage string) {
	if !stream {
		writeJSON(w, http.StatusOK, map[string]any{
			"id": "chatcmpl-fault", "object": "chat.completion", "model": Model,
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": finishReason}},
			"usage":   json.RawMessage(usage),
		})
		return
	}
	if !started {
		startStream(w)
	}
	half := len(content) / 2
	event(w, chunk(content[:half]))
	event(w, chunk(content[half:]))
	event(w, finish(finishReason))
	event(w, `{"id":"chatcmpl-fault","object":"chat.completion.chunk","choices":[],"usage":`+usage+`}`)
	if !noDone {
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}

// WriteError writes the reply of a fault that answers with an HTTP error
// (429 with and without Retry-After, 500, 503, context_length,
// content_filter) in the OpenAI error shape, and reports whether f is
// one of them. The public fake provider (package fakeprovider) answers
// these faults with it, so the two servers send the same bodies.
func WriteError(w http.ResponseWriter, f Fault) bool {
	switch f {
	case RateLimitedRetry, RateLimited:
		if f == RateLimitedRetry {
			w.Header().Set("Retry-After", "1")
		}
		writeJSON(w, http.StatusTooManyRequests, apiError("requests", "rate_limit_exceeded", "Rate limit reached for requests"))
	case InternalError:
		writeJSON(w, http.StatusInternalServerError, apiError("server_error", "", "The server had an error while processing your request."))
	case Unavailable:
		writeJSON(w, http.StatusServiceUnavailable, apiError("server_error", "", "The engine is currently overloaded."))
	case ContextLength:
		writeJSON(w, http.StatusBadRequest, apiError("invalid_request_error", "context_length_exceeded",
			"This model's maximum context length is 8192 tokens. However, your messages resulted in 9000 tokens."))
	case ContentFilter:
		writeJSON(w, http.StatusBadRequest, apiError("invalid_request_error", "content_policy_violation",
			"Your request was rejected as a result of our safety system."))
	default:
		return false
	}
	return true
}

// Reset closes the connection of w with a TCP reset before anything is
// written (ResetBeforeHeaders).
func Reset(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	if tc, ok := conn.(*net.TCPConn); ok {
		_ = tc.SetLinger(0)
	}
	_ = conn.Close()
}

// streamHeader answers 200 with a stream's header.
func streamHeader(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
}

func startStream(w http.ResponseWriter) {
	streamHeader(w)
	event(w, `{"id":"chatcmpl-fault","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"role":"assistant"},"finish_reason":null}]}`)
}

func event(w http.ResponseWriter, data string) {
	fmt.Fprint(w, "data: "+data+"\n\n")
	flush(w)
}

func flush(w http.ResponseWriter) { _ = http.NewResponseController(w).Flush() }

func chunk(content string) string {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-fault", "object": "chat.completion.chunk",
		"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": content}, "finish_reason": nil}},
	})
	return string(b)
}

func finish(reason string) string {
	return fmt.Sprintf(`{"id":"chatcmpl-fault","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":%q}]}`, reason)
}

func apiError(typ, code, msg string) map[string]any {
	e := map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}
	if code != "" {
		e["code"] = code
	}
	return map[string]any{"error": e}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// bodyWriter is an http.ResponseWriter that keeps the body, to compress it.
type bodyWriter struct {
	header http.Header
	buf    *bytes.Buffer
}

func (b *bodyWriter) Header() http.Header         { return b.header }
func (b *bodyWriter) Write(p []byte) (int, error) { return b.buf.Write(p) }
func (b *bodyWriter) WriteHeader(int)             {}
