package faults

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
)

// The server answers POST /{fault}/v1/responses too: each fault of the
// catalogue in the shapes of OpenAI's Responses API (a response whose
// output holds a message of output_text parts, with its status; a stream
// of typed events ending with response.completed or
// response.incomplete). Its HTTP errors are the chat completions' (the
// same API's error objects). NoDone is a healthy response: its streams
// have no [DONE] to leave out. A request's max_output_tokens caps the
// reply, as max_tokens does a completion's.

func (s *Server) responses(w http.ResponseWriter, r *http.Request) {
	s.serveFault(w, r, responsesAPI{})
}

// responsesAPI is the dialect of OpenAI's Responses API.
type responsesAPI struct{}

func (responsesAPI) notJSON(w http.ResponseWriter) { chatAPI{}.notJSON(w) }

func (responsesAPI) writeError(w http.ResponseWriter, f Fault) bool { return WriteError(w, f) }

func (responsesAPI) capped(w http.ResponseWriter, stream, _, started bool, limit int) {
	if limit <= 0 || limit >= ContentTokens {
		writeResponse(w, stream, started, Content, "completed", "", ContentTokens)
		return
	}
	writeResponse(w, stream, started, strings.Join(strings.Fields(Content)[:limit], " "), "incomplete", "max_output_tokens", limit)
}

func (responsesAPI) startStream(w http.ResponseWriter) { startResponseStream(w) }

func (responsesAPI) half(w http.ResponseWriter, stream bool) {
	if stream {
		startResponseStream(w)
		typed(w, "response.output_text.delta", outputTextDelta("Hello! I am "))
		typed(w, "response.output_text.delta", outputTextDelta("here and"))
		return
	}
	body := responseBody(Content, "completed", "", ContentTokens)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	fmt.Fprint(w, body[:len(body)/2])
}

func (responsesAPI) malformed(w http.ResponseWriter, stream bool) {
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"object":"response","status":"completed","output":[{"type":"message","content":[{"type":"output_text","text":"Hel`+"\n")
		return
	}
	startResponseStream(w)
	typed(w, "response.output_text.delta", outputTextDelta("Hello! "))
	fmt.Fprint(w, "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"delta\":\"I am\n\n")
	typed(w, "response.output_text.delta", outputTextDelta("here."))
	endResponseStream(w, "completed", "", ContentTokens)
}

func (responsesAPI) failed(w http.ResponseWriter, stream bool) {
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, strings.Replace(responseBody("Hello! I am", "failed", "", 3), `"error":null`,
			`"error":{"code":"server_error","message":"The upstream provider failed mid-response."}`, 1))
		return
	}
	startResponseStream(w)
	typed(w, "response.output_text.delta", outputTextDelta("Hello! I am "))
	typed(w, "error", `{"type":"error","code":"server_error","message":"The upstream provider failed mid-stream.","param":null}`)
}

func (responsesAPI) other(*Server, http.ResponseWriter, *http.Request, Fault, bool, int) bool {
	return false
}

// writeResponse writes a response of text with its status (and the
// reason it is incomplete), plain or streamed (started: its header and
// response.created are sent).
func writeResponse(w http.ResponseWriter, stream, started bool, text, status, incomplete string, outputTokens int) {
	if !stream {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, responseBody(text, status, incomplete, outputTokens))
		return
	}
	if !started {
		startResponseStream(w)
	}
	half := len(text) / 2
	typed(w, "response.output_text.delta", outputTextDelta(text[:half]))
	typed(w, "response.output_text.delta", outputTextDelta(text[half:]))
	endResponseStream(w, status, incomplete, outputTokens)
}

func responseBody(text, status, incomplete string, outputTokens int) string {
	details := "null"
	if incomplete != "" {
		details = `{"reason":"` + incomplete + `"}`
	}
	b, _ := json.Marshal(text)
	return fmt.Sprintf(`{"id":"resp_fault","object":"response","created_at":1741476542,"status":%q,"error":null,"incomplete_details":%s,"model":%q,`+
		`"output":[{"type":"message","id":"msg_fault","status":"completed","role":"assistant","content":[{"type":"output_text","text":%s,"annotations":[]}]}],`+
		`"usage":{"input_tokens":12,"output_tokens":%d,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":%d}}`,
		status, details, Model, b, outputTokens, 12+outputTokens)
}

func startResponseStream(w http.ResponseWriter) {
	streamHeader(w)
	typed(w, "response.created", fmt.Sprintf(`{"type":"response.created","response":{"id":"resp_fault","object":"response","status":"in_progress","model":%q,"output":[]}}`, Model))
	typed(w, "response.output_item.added", `{"type":"response.output_item.added","output_index":0,"item":{"id":"msg_fault","type":"message","status":"in_progress","role":"assistant","content":[]}}`)
}

func endResponseStream(w http.ResponseWriter, status, incomplete string, outputTokens int) {
	typ := "response.completed"
	if status == "incomplete" {
		typ = "response.incomplete"
	}
	typed(w, typ, `{"type":"`+typ+`","response":`+responseBody("", status, incomplete, outputTokens)+`}`)
}

func outputTextDelta(text string) string {
	b, _ := json.Marshal(text)
	return `{"type":"response.output_text.delta","item_id":"msg_fault","output_index":0,"content_index":0,"delta":` + string(b) + `}`
}
