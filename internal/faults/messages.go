package faults

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// The server answers POST /{fault}/v1/messages too: each fault of the
// catalogue in the shapes of Anthropic's Messages API, as Claude and the
// relays in front of it send them (a message of content blocks with its
// stop_reason; a stream of typed events, event: and data:, ending with
// message_stop; errors as {"type":"error","error":{…}}). Where the API
// has no such fault, the nearest it has stands in: ContentFilter is a
// refusal (stop_reason refusal, HTTP 200), as Claude's streaming
// classifiers end a reply, not an HTTP 400; NoDone is a stream that
// ends after its stop_reason without message_stop; Unavailable is 529
// overloaded_error. The catalogue's other faults (internal errors in
// HTTP 200, cut and stalled bodies) are the chat completions' in these
// shapes.

func (s *Server) messages(w http.ResponseWriter, r *http.Request) { s.serveFault(w, r, messagesAPI{}) }

// messagesAPI is the dialect of Anthropic's Messages API.
type messagesAPI struct{}

func (messagesAPI) notJSON(w http.ResponseWriter) {
	writeJSON(w, http.StatusBadRequest, messageError("invalid_request_error", "the body is not JSON"))
}

func (messagesAPI) writeError(w http.ResponseWriter, f Fault) bool { return writeMessageError(w, f) }

func (messagesAPI) capped(w http.ResponseWriter, stream, noEnd, started bool, limit int) {
	messageCapped(w, stream, noEnd, started, limit)
}

func (messagesAPI) startStream(w http.ResponseWriter) { startMessageStream(w) }

func (messagesAPI) half(w http.ResponseWriter, stream bool) {
	if stream {
		startMessageStream(w)
		typed(w, "content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		typed(w, "content_block_delta", textDelta("Hello! I am "))
		typed(w, "content_block_delta", textDelta("here and"))
		return
	}
	body := messageBody(Content, "end_turn", ContentTokens)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	fmt.Fprint(w, body[:len(body)/2])
}

func (messagesAPI) malformed(w http.ResponseWriter, stream bool) {
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"type":"message","role":"assistant","content":[{"type":"text","text":"Hel`+"\n")
		return
	}
	startMessageStream(w)
	typed(w, "content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	typed(w, "content_block_delta", textDelta("Hello! "))
	fmt.Fprint(w, "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"I am\n\n")
	typed(w, "content_block_delta", textDelta("here."))
	endMessageStream(w, true, "end_turn", ContentTokens, false)
}

func (messagesAPI) failed(w http.ResponseWriter, stream bool) {
	overloaded := messageError("overloaded_error", "Overloaded")
	if !stream {
		writeJSON(w, http.StatusOK, overloaded)
		return
	}
	startMessageStream(w)
	typed(w, "content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
	typed(w, "content_block_delta", textDelta("Hello! I am "))
	b, _ := json.Marshal(overloaded)
	typed(w, "error", string(b))
}

func (messagesAPI) other(_ *Server, w http.ResponseWriter, _ *http.Request, f Fault, stream bool, _ int) bool {
	if f != ContentFilter {
		return false
	}
	writeMessage(w, stream, false, false, "", "refusal", 0)
	return true
}

// writeMessageError writes the reply of a fault that answers with an
// HTTP error, in the Messages API's error shape, and reports whether f
// is one of them.
func writeMessageError(w http.ResponseWriter, f Fault) bool {
	switch f {
	case RateLimitedRetry, RateLimited:
		if f == RateLimitedRetry {
			w.Header().Set("Retry-After", "1")
		}
		writeJSON(w, http.StatusTooManyRequests, messageError("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"))
	case InternalError:
		writeJSON(w, http.StatusInternalServerError, messageError("api_error", "Internal server error"))
	case Unavailable:
		writeJSON(w, 529, messageError("overloaded_error", "Overloaded"))
	case ContextLength:
		writeJSON(w, http.StatusBadRequest, messageError("invalid_request_error", "prompt is too long: 215000 tokens > 200000 maximum"))
	default:
		return false
	}
	return true
}

func messageError(typ, msg string) map[string]any {
	return map[string]any{"type": "error", "error": map[string]any{"type": typ, "message": msg}}
}

// messageCapped is a healthy message of Content held to a cap of limit
// tokens, as answerCapped is a completion: short of ContentTokens, its
// first limit words with stop_reason max_tokens.
func messageCapped(w http.ResponseWriter, stream, noStop, started bool, limit int) {
	if limit <= 0 || limit >= ContentTokens {
		writeMessage(w, stream, noStop, started, Content, "end_turn", ContentTokens)
		return
	}
	writeMessage(w, stream, noStop, started, strings.Join(strings.Fields(Content)[:limit], " "), "max_tokens", limit)
}

// writeMessage writes a message of text, plain or streamed (then without
// message_stop when noStop; started: its header and message_start are
// sent).
func writeMessage(w http.ResponseWriter, stream, noStop, started bool, text, stop string, outputTokens int) {
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, messageBody(text, stop, outputTokens))
		return
	}
	if !started {
		startMessageStream(w)
	}
	if text != "" {
		typed(w, "content_block_start", `{"type":"content_block_start","index":0,"content_block":{"type":"text","text":""}}`)
		typed(w, "ping", `{"type": "ping"}`)
		half := len(text) / 2
		typed(w, "content_block_delta", textDelta(text[:half]))
		typed(w, "content_block_delta", textDelta(text[half:]))
	}
	endMessageStream(w, text != "", stop, outputTokens, noStop)
}

func messageBody(text, stop string, outputTokens int) string {
	content := "[]"
	if text != "" {
		b, _ := json.Marshal(text)
		content = `[{"type":"text","text":` + string(b) + `}]`
	}
	return fmt.Sprintf(`{"id":"msg_fault","type":"message","role":"assistant","model":%q,"content":%s,"stop_reason":%q,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":%d}}`,
		Model, content, stop, outputTokens)
}

func startMessageStream(w http.ResponseWriter) {
	streamHeader(w)
	typed(w, "message_start", fmt.Sprintf(`{"type":"message_start","message":{"id":"msg_fault","type":"message","role":"assistant","model":%q,"content":[],"stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":12,"output_tokens":1}}}`, Model))
}

// endMessageStream ends a stream: its text block, if one was started,
// the stop_reason and, unless noStop, message_stop.
func endMessageStream(w http.ResponseWriter, block bool, stop string, outputTokens int, noStop bool) {
	if block {
		typed(w, "content_block_stop", `{"type":"content_block_stop","index":0}`)
	}
	typed(w, "message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, stop, outputTokens))
	if !noStop {
		typed(w, "message_stop", `{"type":"message_stop"}`)
	}
}

func textDelta(text string) string {
	b, _ := json.Marshal(text)
	return `{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":` + string(b) + `}}`
}

// typed writes one event of a Messages API stream.
func typed(w http.ResponseWriter, typ, data string) {
	fmt.Fprint(w, "event: "+typ+"\ndata: "+data+"\n\n")
	flush(w)
}
