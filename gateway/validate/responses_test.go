package validate

import (
	"fmt"
	"strings"
	"testing"
)

// The shapes below are OpenAI's Responses API as its reference shows them
// (a response, its output items, its stream's events).

// responseBody is a plain reply of the Responses API; incomplete is its
// incomplete_details.reason ("" for none).
func responseBody(status, incomplete string, outputTokens int, items ...string) string {
	details := "null"
	if incomplete != "" {
		details = `{"reason":"` + incomplete + `"}`
	}
	return `{"id":"resp_67ccd2bed1ec8190b14f964abc0542670bb6a6b452d3795b","object":"response","created_at":1741476542,` +
		`"status":"` + status + `","error":null,"incomplete_details":` + details + `,"model":"gpt-4.1-2025-04-14",` +
		`"output":[` + strings.Join(items, ",") + `],` +
		fmt.Sprintf(`"usage":{"input_tokens":36,"input_tokens_details":{"cached_tokens":0},"output_tokens":%d,"output_tokens_details":{"reasoning_tokens":0},"total_tokens":%d}}`, outputTokens, 36+outputTokens)
}

func messageItem(parts ...string) string {
	return `{"type":"message","id":"msg_67ccd2bf17f0819081ff3bb2cf6508e6","status":"completed","role":"assistant","content":[` + strings.Join(parts, ",") + `]}`
}

func outputText(s string) string {
	return `{"type":"output_text","text":` + quoted(s) + `,"annotations":[]}`
}

const (
	reasoningItem    = `{"type":"reasoning","id":"rs_6876cf02e0bc8192b74af0fb64b715ff","summary":[{"type":"summary_text","text":"The user asks for France's capital."}]}`
	functionCallItem = `{"type":"function_call","id":"fc_12345xyz","call_id":"call_12345xyz","name":"get_weather","arguments":"{\"location\":\"Paris\"}"}`
)

// typedEvent is one event of a Responses API stream.
func typedEvent(typ, data string) string {
	return "event: " + typ + "\ndata: {\"type\":\"" + typ + "\"" + data + "}\n\n"
}

func responseTextDelta(s string) string {
	return typedEvent("response.output_text.delta", `,"item_id":"msg_1","output_index":0,"content_index":0,"delta":`+quoted(s))
}

// responseEnd is the stream's last event, carrying the response.
func responseEnd(typ, status, incomplete string, outputTokens int) string {
	return typedEvent(typ, `,"response":`+responseBody(status, incomplete, outputTokens))
}

// responseStream is a whole stream of one message with texts.
func responseStream(status, incomplete string, outputTokens int, texts ...string) string {
	s := typedEvent("response.created", `,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}`) +
		typedEvent("response.in_progress", `,"response":{"id":"resp_1","object":"response","status":"in_progress","output":[]}`) +
		typedEvent("response.output_item.added", `,"output_index":0,"item":{"id":"msg_1","status":"in_progress","type":"message","role":"assistant","content":[]}`) +
		typedEvent("response.content_part.added", `,"item_id":"msg_1","output_index":0,"content_index":0,"part":{"type":"output_text","text":"","annotations":[]}`)
	for _, t := range texts {
		s += responseTextDelta(t)
	}
	typ := "response.completed"
	if status == "incomplete" {
		typ = "response.incomplete"
	}
	return s + typedEvent("response.output_text.done", `,"item_id":"msg_1","output_index":0,"content_index":0,"text":`+quoted(strings.Join(texts, ""))) +
		responseEnd(typ, status, incomplete, outputTokens)
}

func TestClassifyResponses(t *testing.T) {
	const paris = "The capital of France is Paris."
	tests := []formatCase{
		{"response", 200, responseBody("completed", "", 9, messageItem(outputText(paris))), OK, ""},
		{"response, reasoning then text", 200, responseBody("completed", "", 90, reasoningItem, messageItem(outputText(paris))), OK, ""},
		{"response, two parts", 200, responseBody("completed", "", 9, messageItem(outputText("The capital of "), outputText("France is Paris."))), OK, ""},
		{"response, a function call", 200, responseBody("completed", "", 20, functionCallItem), OK, ""},
		{"response, a refusal", 200, responseBody("completed", "", 5, messageItem(`{"type":"refusal","refusal":"I can't help with that."}`)), OK, ""},
		{"response, empty text", 200, responseBody("completed", "", 1, messageItem(outputText(""))), SoftFail, ReasonEmpty},
		{"response, no output", 200, responseBody("completed", "", 0), SoftFail, ReasonEmpty},
		{"response, reasoning only", 200, responseBody("completed", "", 60, reasoningItem), SoftFail, ReasonEmpty},
		{"response, max_output_tokens, the caller's cap unknown", 200, responseBody("incomplete", "max_output_tokens", 9, messageItem(outputText("The capital of"))), SoftFail, ReasonTruncated},
		{"response, withheld by the content filter", 200, responseBody("incomplete", "content_filter", 2, messageItem(outputText(""))), OK, ""},
		{"response, failed", 200, strings.Replace(responseBody("failed", "", 0), `"error":null`, `"error":{"code":"server_error","message":"The model failed to generate a response."}`, 1), SoftFail, ReasonErrorBody},
		{"response, queued (background)", 200, responseBody("queued", "", 0), OK, ""},
		{"response, a fallback phrase", 200, responseBody("completed", "", 9, messageItem(outputText("系统繁忙，请稍后重试"))), SoftFail, ReasonFallbackPhrase},
		{"response, an error object under 200", 200, `{"error":{"message":"The server had an error processing your request.","type":"server_error","code":null}}`, SoftFail, ReasonErrorBody},
		{"response, a relay's error template under 200", 200, `{"code":500,"msg":"系统繁忙，请稍后重试"}`, SoftFail, ReasonErrorBody},
		{"response, not JSON", 200, `{"object":"response","output":[`, SoftFail, ReasonInvalidJSON},
		{"response, a chat completion instead", 200, completion(paris, "stop"), SoftFail, ReasonMissingField},
		{"response, 500", 500, `{"error":{"message":"boom","type":"server_error"}}`, HardFail, ""},
		{"response, 400 context length", 400, `{"error":{"message":"Your input exceeds the context window of this model.","type":"invalid_request_error","code":"context_length_exceeded"}}`, Rejected, ReasonContextLength},

		{"stream", 200, responseStream("completed", "", 9, "The capital of France", " is Paris."), OK, ""},
		{"stream, reasoning then text", 200, typedEvent("response.created", `,"response":{"status":"in_progress","output":[]}`) +
			typedEvent("response.output_item.added", `,"output_index":0,"item":{"id":"rs_1","type":"reasoning","summary":[]}`) +
			typedEvent("response.reasoning_summary_text.delta", `,"item_id":"rs_1","output_index":0,"summary_index":0,"delta":"France's capital."`) +
			responseTextDelta(paris) + responseEnd("response.completed", "completed", "", 40), OK, ""},
		{"stream, a function call", 200, typedEvent("response.created", `,"response":{"status":"in_progress","output":[]}`) +
			typedEvent("response.output_item.added", `,"output_index":0,"item":{"type":"function_call","id":"fc_1","call_id":"call_1","name":"get_weather","arguments":""}`) +
			typedEvent("response.function_call_arguments.delta", `,"item_id":"fc_1","output_index":0,"delta":"{\"location\":\"Paris\"}"`) +
			responseEnd("response.completed", "completed", "", 20), OK, ""},
		{"stream, an event type added later", 200, typedEvent("response.created", `,"response":{"status":"in_progress","output":[]}`) + responseTextDelta(paris) +
			typedEvent("response.output_text.annotation.added", `,"annotation":{"type":"url_citation"}`) + responseEnd("response.completed", "completed", "", 9), OK, ""},
		{"stream, an error event after the first text", 200, typedEvent("response.created", `,"response":{"status":"in_progress","output":[]}`) + responseTextDelta("The capital") +
			typedEvent("error", `,"code":"server_error","message":"The server had an error.","param":null`), SoftFail, ReasonErrorBody},
		{"stream, response.failed", 200, typedEvent("response.created", `,"response":{"status":"in_progress","output":[]}`) + responseTextDelta("The capital") +
			typedEvent("response.failed", `,"response":{"status":"failed","error":{"code":"server_error","message":"The model failed."},"output":[]}`), SoftFail, ReasonErrorBody},
		{"stream, a relay's error template as an event", 200, "data: " + `{"code":500,"msg":"系统繁忙，请稍后重试"}` + "\n\n", SoftFail, ReasonErrorBody},
		{"stream, cut after text", 200, typedEvent("response.created", `,"response":{"status":"in_progress","output":[]}`) + responseTextDelta("The capital of"), SoftFail, ReasonTruncated},
		{"stream, empty text", 200, responseStream("completed", "", 1), SoftFail, ReasonEmpty},
		{"stream, max_output_tokens, the caller's cap unknown", 200, responseStream("incomplete", "max_output_tokens", 5, "The capital of"), SoftFail, ReasonTruncated},
		{"stream, a fallback phrase", 200, responseStream("completed", "", 9, "系统繁忙", "，请稍后重试"), SoftFail, ReasonFallbackPhrase},
		{"stream, chat completion chunks instead", 200, sse(delta(paris), finishChunk("stop"), "[DONE]"), SoftFail, ReasonMissingField},
	}
	checkFormat(t, FormatOpenAIResponses, tests)
}

// TestResponsesCallerMaxTokens holds a response that max_output_tokens
// left incomplete to the caller's cap, as a chat completion that
// finish_reason length ended.
func TestResponsesCallerMaxTokens(t *testing.T) {
	text := strings.Repeat("Paris is the capital of France. ", 20)
	checkCallerCap(t, FormatOpenAIResponses, responseBody("incomplete", "max_output_tokens", 160, messageItem(outputText(text))),
		responseStream("incomplete", "max_output_tokens", 160, text), "status incomplete (max_output_tokens) after 160 tokens generated", 36)
}
