package validate

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// The shapes below are Anthropic's Messages API as its documentation
// shows them (a message, its content blocks, its stream's events).

// messageBody is a plain reply of the Messages API.
func messageBody(stop string, outputTokens int, blocks ...string) string {
	reason := "null"
	if stop != "" {
		reason = `"` + stop + `"`
	}
	return `{"id":"msg_01XFDUDYJgAACzvnptvVoYEL","type":"message","role":"assistant","model":"claude-sonnet-4-5",` +
		`"content":[` + strings.Join(blocks, ",") + `],"stop_reason":` + reason + `,"stop_sequence":null,` +
		fmt.Sprintf(`"usage":{"input_tokens":25,"cache_creation_input_tokens":0,"cache_read_input_tokens":0,"output_tokens":%d}}`, outputTokens)
}

func quoted(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func textBlock(s string) string { return `{"type":"text","text":` + quoted(s) + `}` }
func thinkingBlock(s string) string {
	return `{"type":"thinking","thinking":` + quoted(s) + `,"signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}`
}

const toolUseBlock = `{"type":"tool_use","id":"toolu_01A09q90qw90lq917835lq9","name":"get_weather","input":{"location":"Paris"}}`

// event is one event of a Messages API stream.
func event(typ, data string) string { return "event: " + typ + "\ndata: " + data + "\n\n" }

func messageStart() string {
	return event("message_start", `{"type":"message_start","message":{"id":"msg_1nZdL29xx5MUA1yADyHTEsnR8uuvGzszyY","type":"message","role":"assistant","content":[],"model":"claude-sonnet-4-5","stop_reason":null,"stop_sequence":null,"usage":{"input_tokens":25,"output_tokens":1}}}`)
}
func blockStart(i int, block string) string {
	return event("content_block_start", fmt.Sprintf(`{"type":"content_block_start","index":%d,"content_block":%s}`, i, block))
}
func textDelta(i int, s string) string {
	return event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"text_delta","text":%s}}`, i, quoted(s)))
}
func thinkingDelta(i int, s string) string {
	return event("content_block_delta", fmt.Sprintf(`{"type":"content_block_delta","index":%d,"delta":{"type":"thinking_delta","thinking":%s}}`, i, quoted(s)))
}
func blockStop(i int) string {
	return event("content_block_stop", fmt.Sprintf(`{"type":"content_block_stop","index":%d}`, i))
}
func messageDelta(stop string, outputTokens int) string {
	return event("message_delta", fmt.Sprintf(`{"type":"message_delta","delta":{"stop_reason":%q,"stop_sequence":null},"usage":{"output_tokens":%d}}`, stop, outputTokens))
}

var (
	ping        = event("ping", `{"type": "ping"}`)
	messageStop = event("message_stop", `{"type":"message_stop"}`)
	overloaded  = event("error", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`)
)

// answer is a whole stream of one text block.
func answer(stop string, outputTokens int, texts ...string) string {
	s := messageStart() + blockStart(0, `{"type":"text","text":""}`) + ping
	for _, t := range texts {
		s += textDelta(0, t)
	}
	return s + blockStop(0) + messageDelta(stop, outputTokens) + messageStop
}

func TestClassifyMessages(t *testing.T) {
	const paris = "The capital of France is Paris."
	tests := []formatCase{
		{"message", 200, messageBody("end_turn", 9, textBlock(paris)), OK, ""},
		{"message, thinking then text", 200, messageBody("end_turn", 90, thinkingBlock("The user asks for France's capital."), textBlock(paris)), OK, ""},
		{"message, two text blocks", 200, messageBody("end_turn", 9, textBlock("The capital of "), textBlock("France is Paris.")), OK, ""},
		{"message, stop_sequence", 200, messageBody("stop_sequence", 9, textBlock(paris)), OK, ""},
		{"message, pause_turn", 200, messageBody("pause_turn", 9, textBlock("Let me search for that.")), OK, ""},
		{"message, a tool call without text", 200, messageBody("tool_use", 30, toolUseBlock), OK, ""},
		{"message, refusal", 200, messageBody("refusal", 3), OK, ""},
		{"message, empty text", 200, messageBody("end_turn", 1, textBlock("")), SoftFail, ReasonEmpty},
		{"message, no blocks", 200, messageBody("end_turn", 0), SoftFail, ReasonEmpty},
		{"message, thinking only", 200, messageBody("end_turn", 60, thinkingBlock("The user asks for France's capital.")), SoftFail, ReasonEmpty},
		{"message, max_tokens, the caller's cap unknown", 200, messageBody("max_tokens", 9, textBlock("The capital of France")), SoftFail, ReasonTruncated},
		{"message, model_context_window_exceeded", 200, messageBody("model_context_window_exceeded", 9, textBlock("The capital of France")), SoftFail, ReasonTruncated},
		{"message, a fallback phrase", 200, messageBody("end_turn", 9, textBlock("系统繁忙，请稍后重试")), SoftFail, ReasonFallbackPhrase},
		{"message, a failure's stop_reason", 200, messageBody("error", 3, textBlock("The capital")), SoftFail, ReasonErrorBody},
		{"message, an error object under 200", 200, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, SoftFail, ReasonErrorBody},
		{"message, a relay's error template under 200", 200, `{"code":500,"msg":"系统繁忙，请稍后重试"}`, SoftFail, ReasonErrorBody},
		{"message, a relay's error envelope under 200", 200, `{"status":503,"message":"no available channel for model claude-sonnet-4-5"}`, SoftFail, ReasonErrorBody},
		{"message, not JSON", 200, `{"type":"message","content":[`, SoftFail, ReasonInvalidJSON},
		{"message, a chat completion instead", 200, completion(paris, "stop"), SoftFail, ReasonMissingField},
		{"message, 529 overloaded", 529, `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`, HardFail, ""},
		{"message, 400 prompt too long", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 215000 tokens > 200000 maximum"}}`, Rejected, ReasonContextLength},
		{"message, 400", 400, `{"type":"error","error":{"type":"invalid_request_error","message":"max_tokens: Field required"}}`, Rejected, ReasonInvalidRequest},

		{"stream", 200, answer("end_turn", 9, "The capital of France", " is Paris."), OK, ""},
		{"stream, without message_stop", 200, strings.TrimSuffix(answer("end_turn", 9, paris), messageStop), OK, ""},
		{"stream, thinking then text", 200, messageStart() + blockStart(0, `{"type":"thinking","thinking":""}`) + thinkingDelta(0, "France's capital.") +
			event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds"}}`) +
			blockStop(0) + blockStart(1, `{"type":"text","text":""}`) + textDelta(1, paris) + blockStop(1) + messageDelta("end_turn", 40) + messageStop, OK, ""},
		{"stream, a tool call", 200, messageStart() + blockStart(0, `{"type":"tool_use","id":"toolu_01","name":"get_weather","input":{}}`) +
			event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"input_json_delta","partial_json":"{\"location\": \"Paris\"}"}}`) +
			blockStop(0) + messageDelta("tool_use", 20) + messageStop, OK, ""},
		{"stream, an event type added later", 200, messageStart() + blockStart(0, `{"type":"text","text":""}`) + textDelta(0, paris) +
			event("content_block_delta", `{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"type":"char_location"}}}`) +
			event("message_annotation", `{"type":"message_annotation","note":"x"}`) + blockStop(0) + messageDelta("end_turn", 9) + messageStop, OK, ""},
		{"stream, refusal", 200, messageStart() + messageDelta("refusal", 2) + messageStop, OK, ""},
		{"stream, overloaded after the first text", 200, messageStart() + blockStart(0, `{"type":"text","text":""}`) + textDelta(0, "The capital") + overloaded, SoftFail, ReasonErrorBody},
		{"stream, overloaded first", 200, overloaded, SoftFail, ReasonErrorBody},
		{"stream, an error event without its event name", 200, messageStart() + "data: " + `{"type":"error","error":{"type":"api_error","message":"Internal server error"}}` + "\n\n", SoftFail, ReasonErrorBody},
		{"stream, a relay's error template as an event", 200, messageStart() + "data: " + `{"code":500,"msg":"系统繁忙，请稍后重试"}` + "\n\n", SoftFail, ReasonErrorBody},
		{"stream, cut after text", 200, messageStart() + blockStart(0, `{"type":"text","text":""}`) + textDelta(0, "The capital of"), SoftFail, ReasonTruncated},
		{"stream, cut after message_start", 200, messageStart(), SoftFail, ReasonTruncated},
		{"stream, empty text", 200, answer("end_turn", 1), SoftFail, ReasonEmpty},
		{"stream, thinking only", 200, messageStart() + blockStart(0, `{"type":"thinking","thinking":""}`) + thinkingDelta(0, "France's capital.") + blockStop(0) + messageDelta("end_turn", 40) + messageStop, SoftFail, ReasonEmpty},
		{"stream, max_tokens, the caller's cap unknown", 200, answer("max_tokens", 5, "The capital of"), SoftFail, ReasonTruncated},
		{"stream, a fallback phrase", 200, answer("end_turn", 9, "系统繁忙", "，请稍后重试"), SoftFail, ReasonFallbackPhrase},
		{"stream, a failure's stop_reason", 200, answer("network_error", 5, "The capital"), SoftFail, ReasonErrorBody},
		{"stream, chat completion chunks instead", 200, sse(delta(paris), finishChunk("stop"), "[DONE]"), SoftFail, ReasonMissingField},
		{"stream, an event that is not JSON", 200, messageStart() + "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\n\n" + messageStop, SoftFail, ReasonInvalidJSON},
	}
	checkFormat(t, FormatAnthropicMessages, tests)
}

// formatCase is a reply in one format and its verdict; a name that
// begins "stream" is a stream's.
type formatCase struct {
	name   string
	status int
	body   string
	want   Verdict
	reason Reason
}

// checkFormat judges each case in format, every way classifyEveryWay
// judges it.
func checkFormat(t *testing.T, format Format, tests []formatCase) {
	t.Helper()
	v := MustNew(Rules{Format: format})
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			header := jsonHeader
			stream := strings.HasPrefix(tt.name, "stream")
			if stream {
				header = sseHeader
			}
			got := classifyEveryWay(t, v, tt.status, header, tt.body, stream)
			if got.Verdict != tt.want || got.Reason != tt.reason {
				t.Errorf("got %s/%s (%s), want %s/%s", got.Verdict, got.Reason, got.Detail, tt.want, tt.reason)
			}
		})
	}
}

// TestMessagesCallerMaxTokens holds a message that max_tokens ended to
// the caller's cap, as a chat completion that finish_reason length ended.
func TestMessagesCallerMaxTokens(t *testing.T) {
	text := strings.Repeat("Paris is the capital of France. ", 20)
	checkCallerCap(t, FormatAnthropicMessages, messageBody("max_tokens", 160, textBlock(text)), answer("max_tokens", 160, text),
		"stop_reason max_tokens after 160 tokens generated", 25)
}

// checkCallerCap judges a plain and a streamed reply in format, ended at
// 160 generated tokens by a token limit, against a caller's cap of 160
// (the caller's own: ok) and 4096 (the route's: truncated, its detail
// holding detail); each reply's usage must read 160 output tokens and
// input tokens.
func checkCallerCap(t *testing.T, format Format, plain, stream, detail string, input int) {
	t.Helper()
	v := MustNew(Rules{Format: format})
	for _, tt := range []struct {
		name string
		body string
		cap  int
		want Verdict
	}{
		{"at the cap", plain, 160, OK},
		{"well short of the cap", plain, 4096, SoftFail},
		{"streamed, at the cap", stream, 160, OK},
		{"streamed, well short of the cap", stream, 4096, SoftFail},
	} {
		t.Run(tt.name, func(t *testing.T) {
			header := jsonHeader
			if strings.HasPrefix(tt.name, "streamed") {
				header = sseHeader
			}
			c := v.Start(200, header)
			c.CallerMaxTokens(tt.cap)
			_, _ = c.Write([]byte(tt.body))
			got := c.Finish()
			if got.Verdict != tt.want {
				t.Errorf("got %s/%s (%s), want %s", got.Verdict, got.Reason, got.Detail, tt.want)
			}
			if tt.want != OK && !strings.Contains(got.Detail, detail) {
				t.Errorf("detail %q, want it to hold %q", got.Detail, detail)
			}
			if got.Usage.CompletionTokens != 160 || got.Usage.PromptTokens != input {
				t.Errorf("usage %+v, want 160 output tokens and %d input tokens", got.Usage, input)
			}
		})
	}
}

// TestMessagesFirstToken: a stream's first token is its first text,
// thinking or tool call, not the message_start or an empty block.
func TestMessagesFirstToken(t *testing.T) {
	v := MustNew(Rules{Format: FormatAnthropicMessages})
	c := v.Start(200, sseHeader)
	for _, ev := range []string{messageStart(), ping, blockStart(0, `{"type":"text","text":""}`)} {
		_, _ = c.Write([]byte(ev))
		if c.FirstToken() {
			t.Fatalf("first token after %q", ev)
		}
	}
	_, _ = c.Write([]byte(textDelta(0, "Paris")))
	if !c.FirstToken() {
		t.Fatal("no first token after a text_delta")
	}
	c = v.Start(200, sseHeader)
	_, _ = c.Write([]byte(messageStart() + blockStart(0, `{"type":"thinking","thinking":""}`) + thinkingDelta(0, "Hmm")))
	if !c.FirstToken() {
		t.Fatal("no first token after a thinking_delta")
	}
}
