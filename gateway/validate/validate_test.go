package validate

import (
	"fmt"
	"mime"
	"net/http"
	"strings"
	"testing"
)

func completion(content, finish string) string {
	return fmt.Sprintf(`{"id":"x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":%q},"finish_reason":%q}],"usage":{"prompt_tokens":10,"completion_tokens":5,"total_tokens":15}}`, content, finish)
}

func sse(events ...string) string {
	var b strings.Builder
	for _, e := range events {
		b.WriteString("data: " + e + "\n\n")
	}
	return b.String()
}

func delta(content string) string {
	return fmt.Sprintf(`{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":%q},"finish_reason":null}]}`, content)
}

func finishChunk(reason string) string {
	return fmt.Sprintf(`{"id":"x","object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":%q}]}`, reason)
}

var sseHeader = http.Header{"Content-Type": {"text/event-stream; charset=utf-8"}}
var jsonHeader = http.Header{"Content-Type": {"application/json"}}

func TestClassify(t *testing.T) {
	schema := `{"type":"object","required":["city","country"],"properties":{"city":{"type":"string"},"country":{"type":"string"}}}`
	long := "Paris is the capital and most populous city of France, on the Seine."
	tests := []struct {
		name   string
		rules  Rules
		status int
		header http.Header
		body   string
		want   Verdict
		reason Reason
	}{
		{"healthy", Rules{MinLength: 5}, 200, jsonHeader, completion(long, "stop"), OK, ""},
		{"5xx", Rules{}, 503, jsonHeader, `{"error":{"message":"overloaded"}}`, HardFail, ""},
		{"422", Rules{}, 422, jsonHeader, `{"detail":"top_p"}`, HardFail, ""},
		{"empty body", Rules{}, 200, jsonHeader, "", SoftFail, ReasonEmpty},
		{"blank body", Rules{}, 200, jsonHeader, " \n ", SoftFail, ReasonEmpty},
		{"empty content", Rules{}, 200, jsonHeader, completion("  ", "stop"), SoftFail, ReasonEmpty},
		{"tool calls without content", Rules{}, 200, jsonHeader,
			`{"choices":[{"message":{"role":"assistant","content":null,"tool_calls":[{"id":"1"}]},"finish_reason":"tool_calls"}]}`, OK, ""},
		{"invalid json", Rules{}, 200, jsonHeader, `{"choices":[{"message":{"content":"Par`, SoftFail, ReasonInvalidJSON},
		{"trailing garbage", Rules{}, 200, jsonHeader, completion(long, "stop") + "}", SoftFail, ReasonInvalidJSON},
		{"error object in 200", Rules{}, 200, jsonHeader, `{"error":{"message":"rate limit reached","type":"requests"}}`, SoftFail, ReasonErrorBody},
		{"error template in 200", Rules{}, 200, jsonHeader, `{"code":500,"msg":"系统繁忙，请稍后重试"}`, SoftFail, ReasonErrorBody},
		{"html error page", Rules{}, 200, http.Header{"Content-Type": {"text/html"}}, `<html><body>502 Bad Gateway</body></html>`, SoftFail, ReasonErrorBody},
		{"plain text error", Rules{}, 200, nil, `服务器开小差了，请稍后再试`, SoftFail, ReasonErrorBody},
		{"missing message", Rules{}, 200, jsonHeader, `{"choices":[{"index":0,"finish_reason":"stop"}]}`, SoftFail, ReasonMissingField},
		{"missing choices", Rules{}, 200, jsonHeader, `{"id":"x"}`, SoftFail, ReasonMissingField},
		{"required field", Rules{RequiredFields: []string{"$.usage.total_tokens", "choices[0].message.content"}}, 200, jsonHeader,
			`{"choices":[{"message":{"content":"hi there"},"finish_reason":"stop"}]}`, SoftFail, ReasonMissingField},
		{"finish length", Rules{}, 200, jsonHeader, completion(long, "length"), SoftFail, ReasonTruncated},
		{"fallback zh", Rules{}, 200, jsonHeader, completion("系统繁忙，请稍后重试。", "stop"), SoftFail, ReasonFallbackPhrase},
		{"fallback en", Rules{}, 200, jsonHeader, completion("Service unavailable, please try again later.", "stop"), SoftFail, ReasonFallbackPhrase},
		{"long answer mentioning rate limit", Rules{}, 200, jsonHeader,
			completion(strings.Repeat("A rate limit caps how many requests a client may send per minute. ", 3), "stop"), OK, ""},
		{"too short", Rules{MinLength: 20}, 200, jsonHeader, completion("Paris.", "stop"), SoftFail, ReasonTooShort},
		{"too short counts characters", Rules{MinLength: 6}, 200, jsonHeader, completion("巴黎是法国首都", "stop"), OK, ""},
		{"schema ok", Rules{Schema: schema}, 200, jsonHeader, completion(`{"city":"Paris","country":"France"}`, "stop"), OK, ""},
		{"schema fenced", Rules{Schema: schema}, 200, jsonHeader, completion("```json\n{\"city\":\"Paris\",\"country\":\"France\"}\n```", "stop"), OK, ""},
		{"schema missing", Rules{Schema: schema}, 200, jsonHeader, completion(`{"city":"Paris"}`, "stop"), SoftFail, ReasonMissingField},
		{"schema not json", Rules{Schema: schema}, 200, jsonHeader, completion(`The city is Paris`, "stop"), SoftFail, ReasonInvalidJSON},
		{"format json", Rules{Format: FormatJSON, RequiredFields: []string{"data[0].embedding"}}, 200, jsonHeader, `{"data":[{"embedding":[0.1]}]}`, OK, ""},
		{"format json missing", Rules{Format: FormatJSON, RequiredFields: []string{"data[0].embedding"}}, 200, jsonHeader, `{"data":[]}`, SoftFail, ReasonMissingField},
		{"format text", Rules{Format: FormatText, MinLength: 3}, 200, nil, "hello world", OK, ""},
		{"format text short", Rules{Format: FormatText, MinLength: 30}, 200, nil, "hello world", SoftFail, ReasonTooShort},

		// Streams.
		{"stream healthy", Rules{MinLength: 5}, 200, sseHeader, sse(delta("Paris is "), delta("the capital."), finishChunk("stop"), "[DONE]"), OK, ""},
		{"stream without header", Rules{}, 200, nil, sse(delta("Paris is the capital."), finishChunk("stop"), "[DONE]"), OK, ""},
		{"stream crlf and comments", Rules{}, 200, sseHeader, ": keep-alive\r\n\r\nevent: message\r\ndata: " + delta("Paris") + "\r\n\r\ndata: [DONE]\r\n\r\n", OK, ""},
		{"stream bare cr line ends", Rules{}, 200, sseHeader, ": keep-alive\r\revent: message\rdata: " + delta("Paris") + "\r\rdata: " + finishChunk("stop") + "\r\rdata: [DONE]\r\r", OK, ""},
		{"stream mixed line ends", Rules{}, 200, sseHeader, "data: " + delta("Paris") + "\r\n\rdata: " + finishChunk("stop") + "\n\r\ndata: [DONE]\r", OK, ""},
		{"stream bare cr cut mid event", Rules{}, 200, sseHeader, "data: " + delta("Paris") + "\r\rdata: {\"choices\":[{\"delta\":{\"content\":\"th", SoftFail, ReasonTruncated},
		{"stream cut before done", Rules{}, 200, sseHeader, sse(delta("Paris is "), delta("the")), SoftFail, ReasonTruncated},
		{"stream cut mid event", Rules{}, 200, sseHeader, sse(delta("Paris is ")) + `data: {"choices":[{"delta":{"content":"th`, SoftFail, ReasonTruncated},
		{"stream finish length", Rules{}, 200, sseHeader, sse(delta("Paris is "), finishChunk("length"), "[DONE]"), SoftFail, ReasonTruncated},
		{"stream last line without newline", Rules{}, 200, sseHeader, sse(delta("Paris"), finishChunk("stop")) + "data: [DONE]", OK, ""},
		{"stream empty", Rules{}, 200, sseHeader, "", SoftFail, ReasonEmpty},
		{"stream only done", Rules{}, 200, sseHeader, sse(finishChunk("stop"), "[DONE]"), SoftFail, ReasonEmpty},
		{"stream invalid event", Rules{}, 200, sseHeader, sse(delta("Par"), `{"choices":[{"delta":`, "[DONE]"), SoftFail, ReasonInvalidJSON},
		{"stream error event", Rules{}, 200, sseHeader, sse(delta("Par"), `{"error":{"message":"upstream overloaded"}}`), SoftFail, ReasonErrorBody},
		{"stream error template event", Rules{}, 200, sseHeader, sse("系统繁忙，请稍后重试"), SoftFail, ReasonErrorBody},
		{"stream no choices", Rules{}, 200, sseHeader, sse(`{"id":"x"}`, "[DONE]"), SoftFail, ReasonMissingField},
		{"stream fallback", Rules{}, 200, sseHeader, sse(delta("系统繁忙，"), delta("请稍后重试"), finishChunk("stop"), "[DONE]"), SoftFail, ReasonFallbackPhrase},
		{"stream too short", Rules{MinLength: 10}, 200, sseHeader, sse(delta("Par"), finishChunk("stop"), "[DONE]"), SoftFail, ReasonTooShort},
		{"stream schema", Rules{Schema: schema}, 200, sseHeader, sse(delta(`{"city":"Paris",`), delta(`"country":"France"}`), finishChunk("stop"), "[DONE]"), OK, ""},
		{"stream 500", Rules{}, 500, sseHeader, "data: oops\n\n", HardFail, ""},
		// A relay that fails a streamed request may send its error under
		// the stream's Content-Type: it is an error body all the same.
		{"stream header, an error object", Rules{}, 200, sseHeader, `{"error":{"message":"upstream overloaded","type":"server_error"}}`, SoftFail, ReasonErrorBody},
		{"stream header, an error template object", Rules{}, 200, sseHeader, "\n" + `{"code":500,"msg":"系统繁忙，请稍后重试"}`, SoftFail, ReasonErrorBody},
		{"stream header, an error template's text", Rules{}, 200, sseHeader, "系统繁忙，请稍后重试", SoftFail, ReasonErrorBody},
		{"stream header, an error page", Rules{}, 200, sseHeader, "<html><body>502 Bad Gateway</body></html>", SoftFail, ReasonErrorBody},
		{"stream header, a whole completion", Rules{}, 200, sseHeader, completion("Paris is the capital of France.", "stop"), OK, ""},
		{"stream header, blank lines only", Rules{}, 200, sseHeader, "\n\n\n", SoftFail, ReasonEmpty},
		{"stream header, blank lines past 4 KiB, then events", Rules{}, 200, sseHeader, strings.Repeat("\n", 5000) + sse(delta("Paris"), finishChunk("stop"), "[DONE]"), OK, ""},

		// A stream that ends cleanly after a final finish_reason is
		// complete, with or without [DONE]; one cut before it is not.
		{"stream stop without done", Rules{}, 200, sseHeader, sse(delta("Paris is the capital."), finishChunk("stop")), OK, ""},
		{"stream stop, usage, without done", Rules{}, 200, sseHeader, sse(delta("Paris is the capital."), finishChunk("stop"), `{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}`), OK, ""},
		{"stream tool calls without done", Rules{}, 200, sseHeader, sse(`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"1"}]}}]}`, finishChunk("tool_calls")), OK, ""},
		{"stream content filter without done", Rules{}, 200, sseHeader, sse(delta("Paris is the capital."), finishChunk("content_filter")), OK, ""},
		{"stream length without done", Rules{}, 200, sseHeader, sse(delta("Paris is "), finishChunk("length")), SoftFail, ReasonTruncated},
		{"stream stop then cut mid event", Rules{}, 200, sseHeader, sse(delta("Paris is the capital."), finishChunk("stop")) + `data: {"choi`, SoftFail, ReasonTruncated},

		// Error objects are error bodies wherever they arrive.
		{"error object without pattern", Rules{}, 200, jsonHeader, `{"code":500,"msg":"busy"}`, SoftFail, ReasonErrorBody},
		{"error object with string code", Rules{}, 200, jsonHeader, `{"code":"503","message":"upstream busy"}`, SoftFail, ReasonErrorBody},
		{"success envelope is not an error", Rules{}, 200, jsonHeader, `{"code":0,"msg":"ok"}`, SoftFail, ReasonMissingField},
		{"stream error template object only", Rules{}, 200, sseHeader, sse(`{"code":500,"msg":"系统繁忙，请稍后重试"}`), SoftFail, ReasonErrorBody},
		{"stream error template object and done", Rules{}, 200, sseHeader, sse(`{"code":500,"msg":"系统繁忙，请稍后重试"}`, "[DONE]"), SoftFail, ReasonErrorBody},
		{"stream error object after deltas", Rules{}, 200, sseHeader, sse(delta("Par"), `{"code":500,"msg":"busy"}`, "[DONE]"), SoftFail, ReasonErrorBody},
		{"stream error object without blank line", Rules{}, 200, sseHeader, `data: {"code":500,"msg":"系统繁忙，请稍后重试"}`, SoftFail, ReasonErrorBody},

		// A provider's failure reported inside the completion (OpenRouter's
		// error object beside the choices, finish_reason error); a blank
		// error member beside a healthy completion is not one.
		{"error object beside choices", Rules{}, 200, jsonHeader, `{"id":"x","choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"error"}],"error":{"code":502,"message":"Provider returned error"}}`, SoftFail, ReasonErrorBody},
		{"finish error with content", Rules{}, 200, jsonHeader, completion("Paris is", "error"), SoftFail, ReasonErrorBody},
		{"blank error members beside a completion", Rules{}, 200, jsonHeader, `{"choices":[{"index":0,"message":{"role":"assistant","content":"Paris is the capital."},"finish_reason":"stop"}],"error":null}`, OK, ""},
		{"empty error object beside a completion", Rules{}, 200, jsonHeader, `{"choices":[{"index":0,"message":{"role":"assistant","content":"Paris is the capital."},"finish_reason":"stop"}],"error":{ }}`, OK, ""},
		{"empty error string beside a completion", Rules{}, 200, jsonHeader, `{"choices":[{"index":0,"message":{"role":"assistant","content":"Paris is the capital."},"finish_reason":"stop"}],"error":""}`, OK, ""},
		{"stream error object beside choices", Rules{}, 200, sseHeader, ": OPENROUTER PROCESSING\n\n" + sse(delta("Paris is "), `{"id":"x","object":"chat.completion.chunk","error":{"code":"server_error","message":"Provider disconnected unexpectedly"},"choices":[{"index":0,"delta":{"content":""},"finish_reason":"error"}]}`), SoftFail, ReasonErrorBody},
		{"stream finish error", Rules{}, 200, sseHeader, sse(delta("Paris is "), finishChunk("error"), "[DONE]"), SoftFail, ReasonErrorBody},
		{"finish insufficient_system_resource (DeepSeek)", Rules{}, 200, jsonHeader, completion("Paris is", "insufficient_system_resource"), SoftFail, ReasonErrorBody},
		{"stream finish insufficient_system_resource (DeepSeek)", Rules{}, 200, sseHeader, sse(delta("Paris is "), finishChunk("insufficient_system_resource"), "[DONE]"), SoftFail, ReasonErrorBody},
		{"finish network_error (Zhipu)", Rules{}, 200, jsonHeader, completion("Paris is", "network_error"), SoftFail, ReasonErrorBody},
		{"stream finish network_error (Zhipu)", Rules{}, 200, sseHeader, sse(delta("Paris is "), finishChunk("network_error"), "[DONE]"), SoftFail, ReasonErrorBody},
		{"finish abort (vLLM)", Rules{}, 200, jsonHeader, completion("Paris is", "abort"), SoftFail, ReasonErrorBody},
		{"stream finish abort (vLLM)", Rules{}, 200, sseHeader, sse(delta("Paris is "), finishChunk("abort"), "[DONE]"), SoftFail, ReasonErrorBody},
		{"stream blank error object without choices", Rules{}, 200, sseHeader, sse(delta("Par"), `{"error":{}}`, "[DONE]"), SoftFail, ReasonErrorBody},
		{"stream blank error members", Rules{}, 200, sseHeader, sse(`{"choices":[{"index":0,"delta":{"content":"Paris is the capital."}}],"error":{}}`, `{"choices":[{"index":0,"delta":{},"finish_reason":"stop"}],"error":""}`, "[DONE]"), OK, ""},

		// Rejections the caller caused (HTTP 400 with an OpenAI-style error
		// code) are not route failures; every other 4xx and 5xx is.
		{"400 context length", Rules{}, 400, jsonHeader, `{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","param":"messages","code":"context_length_exceeded"}}`, Rejected, ReasonContextLength},
		{"400 content policy", Rules{}, 400, jsonHeader, `{"error":{"message":"Your request was rejected by the safety system.","type":"invalid_request_error","code":"content_policy_violation"}}`, Rejected, ReasonContentPolicy},
		{"400 content filter", Rules{}, 400, jsonHeader, `{"error":{"message":"filtered","code":"content_filter","status":400}}`, Rejected, ReasonContentPolicy},
		{"400 invalid request", Rules{}, 400, jsonHeader, `{"error":{"message":"messages: field required","type":"invalid_request_error","code":null}}`, Rejected, ReasonInvalidRequest},
		{"400 streamed context length", Rules{}, 400, sseHeader, `{"error":{"type":"invalid_request_error","code":"context_length_exceeded"}}`, Rejected, ReasonContextLength},
		{"400 custom code", Rules{RejectedCodes: map[string]Reason{"model_context_window_exceeded": ReasonContextLength}}, 400, jsonHeader, `{"error":{"code":"model_context_window_exceeded"}}`, Rejected, ReasonContextLength},
		{"400 without error object", Rules{}, 400, jsonHeader, `<html>Bad Request</html>`, HardFail, ""},
		{"400 unknown code", Rules{}, 400, jsonHeader, `{"error":{"code":"upstream_error","type":"server_error"}}`, HardFail, ""},
		{"401 invalid request", Rules{}, 401, jsonHeader, `{"error":{"type":"invalid_request_error","code":"invalid_api_key"}}`, HardFail, ""},
		{"404 model not found", Rules{}, 404, jsonHeader, `{"error":{"type":"invalid_request_error","code":"model_not_found"}}`, HardFail, ""},
		{"429 context length", Rules{}, 429, jsonHeader, `{"error":{"code":"context_length_exceeded"}}`, HardFail, ""},
		{"500 content policy", Rules{}, 500, jsonHeader, `{"error":{"code":"content_policy_violation"}}`, HardFail, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := New(tt.rules)
			if err != nil {
				t.Fatal(err)
			}
			got := classifyEveryWay(t, v, tt.status, tt.header, tt.body, strings.HasPrefix(tt.name, "stream"))
			if got.Verdict != tt.want || got.Reason != tt.reason {
				t.Errorf("got %s/%s (%s), want %s/%s", got.Verdict, got.Reason, got.Detail, tt.want, tt.reason)
			}
		})
	}
}

// classifyEveryWay judges body whole, and checks that fed one byte at a
// time it is judged the same; a stream's too with each line end (CRLF,
// LF or CR, as the HTML standard's event stream format allows), whole
// and byte by byte. It returns the verdict on the whole body.
func classifyEveryWay(t *testing.T, v *Validator, status int, header http.Header, body string, stream bool) Result {
	t.Helper()
	got := v.Classify(status, header, []byte(body))
	c := v.Start(status, header)
	for i := range len(body) {
		c.Write([]byte{body[i]})
	}
	if bytewise := c.Finish(); bytewise.Verdict != got.Verdict || bytewise.Reason != got.Reason {
		t.Errorf("byte by byte: %s/%s (%s), whole: %s/%s", bytewise.Verdict, bytewise.Reason, bytewise.Detail, got.Verdict, got.Reason)
	}
	if !stream {
		return got
	}
	lf := strings.ReplaceAll(strings.ReplaceAll(body, "\r\n", "\n"), "\r", "\n")
	for _, end := range []string{"\n", "\r\n", "\r"} {
		body := strings.ReplaceAll(lf, "\n", end)
		if other := v.Classify(status, header, []byte(body)); other.Verdict != got.Verdict || other.Reason != got.Reason {
			t.Errorf("line ends %q: %s/%s (%s), want %s/%s", end, other.Verdict, other.Reason, other.Detail, got.Verdict, got.Reason)
		}
		c := v.Start(status, header)
		for i := range len(body) {
			c.Write([]byte{body[i]})
		}
		if bytewise := c.Finish(); bytewise.Verdict != got.Verdict || bytewise.Reason != got.Reason {
			t.Errorf("line ends %q, byte by byte: %s/%s (%s), want %s/%s", end, bytewise.Verdict, bytewise.Reason, bytewise.Detail, got.Verdict, got.Reason)
		}
	}
	return got
}

func TestClassifyDetails(t *testing.T) {
	v := MustNew(Rules{})
	r := v.Classify(200, jsonHeader, []byte(completion("Paris", "stop")))
	if r.Usage.TotalTokens != 15 || r.Content != "Paris" || r.Chars != 5 || r.FinishReason != "stop" || r.Stream {
		t.Errorf("plain: %+v", r)
	}
	r = v.Classify(200, sseHeader, []byte(sse(delta("巴黎"), `{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}`, finishChunk("stop"), "[DONE]")))
	if r.Usage.TotalTokens != 5 || r.Content != "巴黎" || r.Chars != 2 || !r.Stream || r.Verdict != OK {
		t.Errorf("stream: %+v", r)
	}
}

func TestInterrupted(t *testing.T) {
	v := MustNew(Rules{})
	for _, h := range []http.Header{jsonHeader, sseHeader} {
		c := v.Start(200, h)
		c.Write([]byte(completion("Paris", "stop")))
		c.Interrupted()
		if r := c.Finish(); r.Reason != ReasonTruncated {
			t.Errorf("%v: %+v", h, r)
		}
	}
}

func TestOverflow(t *testing.T) {
	v := MustNew(Rules{MaxBodyBytes: 64})
	if r := v.Classify(200, jsonHeader, []byte(completion(strings.Repeat("x", 100), "stop"))); r.Reason != ReasonBodyTooLarge {
		t.Errorf("overflowing plain body: %+v", r)
	}
	r := v.Classify(200, sseHeader, []byte(sse(delta(strings.Repeat("x", 100)), finishChunk("stop"), "[DONE]")))
	if r.Reason != ReasonBodyTooLarge || r.Chars != 100 {
		t.Errorf("overflowing stream content: %+v", r)
	}
	if r := v.Classify(500, jsonHeader, []byte(strings.Repeat("x", 100))); r.Verdict != HardFail {
		t.Errorf("overflowing 5xx body: %+v", r)
	}
	if r := MustNew(Rules{MaxBodyBytes: 1000}).Classify(200, jsonHeader, []byte(completion(strings.Repeat("x", 100), "stop"))); r.Verdict != OK {
		t.Errorf("body under the cap: %+v", r)
	}
}

func TestNewRejects(t *testing.T) {
	_, err := New(Rules{Format: "xml", RequiredFields: []string{"a[x]", ""}, Schema: `{"type": 3}`, MinLength: -1, FallbackPhrases: []string{""},
		RejectedCodes: map[string]Reason{"": ReasonContextLength, "too_long": "bogus"}})
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"format", "required_fields[0]", "required_fields[1]", "schema", "negative", "fallback_phrases[0]", `rejected_codes[""]`, `rejected_codes["too_long"]: "bogus"`} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
	if _, err := New(Rules{Schema: `{"$ref":"http://example.com/s.json"}`}); err == nil {
		t.Error("a remote $ref compiled")
	}
}

func TestParsePath(t *testing.T) {
	for in, want := range map[string]string{
		"choices[0].message.content": "choices[0].message.content",
		"$.choices.0.message":        "choices[0].message",
		"a[1][2].b":                  "a[1][2].b",
	} {
		p, err := parsePath(in)
		if err != nil || p.String() != want {
			t.Errorf("parsePath(%q) = %v, %v; want %s", in, p, err, want)
		}
	}
}

// TestFirstToken: a stream's first token is the first event with content
// or a tool call; a role-only chunk is not one, nor is a plain body.
func TestFirstToken(t *testing.T) {
	v := MustNew(Rules{})
	c := v.Start(200, sseHeader)
	c.Write([]byte(sse(`{"choices":[{"index":0,"delta":{"role":"assistant"}}]}`)))
	if c.FirstToken() {
		t.Fatal("a role chunk counted as the first token")
	}
	c.Write([]byte("data: " + delta("Par")))
	if c.FirstToken() {
		t.Fatal("an event without its blank line counted")
	}
	c.Write([]byte("\n\n"))
	if !c.FirstToken() {
		t.Fatal("content not seen as the first token")
	}
	c = v.Start(200, sseHeader)
	c.Write([]byte(sse(`{"choices":[{"index":0,"delta":{"tool_calls":[{"id":"1"}]}}]}`)))
	if !c.FirstToken() {
		t.Fatal("a tool call is not the first token")
	}
	for _, d := range []string{`{"reasoning_content":"Let me think"}`, `{"reasoning":"Let me think"}`, `{"content":null,"refusal":"I'm sorry"}`,
		`{"content":[{"type":"thinking","thinking":[{"type":"text","text":"Hmm"}]}]}`, `{"content":[{"type":"text","text":"Paris"}]}`} {
		c = v.Start(200, sseHeader)
		c.Write([]byte(sse(`{"choices":[{"index":0,"delta":{"role":"assistant","reasoning_content":""}}]}`)))
		if c.FirstToken() {
			t.Fatalf("an empty reasoning_content counted as the first token")
		}
		c.Write([]byte(sse(`{"choices":[{"index":0,"delta":` + d + `}]}`)))
		if !c.FirstToken() {
			t.Errorf("%s is not the first token", d)
		}
	}
	c = v.Start(200, jsonHeader)
	c.Write([]byte(completion("Paris", "stop")))
	if c.FirstToken() {
		t.Fatal("a plain body has a first token")
	}
}

// TestRefusalsAndReasoning: a refusal (OpenAI's structured outputs send
// it with content null) is the model's answer, not an empty one; a
// reasoning model's thinking, before its content, is not content: a
// reply that thinks and then says nothing is empty. Content sent as an
// array of parts is the text of its text parts.
func TestRefusalsAndReasoning(t *testing.T) {
	v := MustNew(Rules{})
	think := func(field, text string) string {
		return `{"choices":[{"index":0,"delta":{"` + field + `":"` + text + `","content":null},"finish_reason":null}]}`
	}
	for _, tc := range []struct {
		name   string
		header http.Header
		body   string
		want   Verdict
		reason Reason
	}{
		{"plain refusal", jsonHeader, `{"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":"I'm sorry, I can't help with that."},"finish_reason":"stop"}]}`, OK, ""},
		{"plain empty refusal", jsonHeader, `{"choices":[{"index":0,"message":{"role":"assistant","content":null,"refusal":""},"finish_reason":"stop"}]}`, SoftFail, ReasonEmpty},
		{"streamed refusal", sseHeader, sse(`{"choices":[{"index":0,"delta":{"role":"assistant","content":null,"refusal":""},"finish_reason":null}]}`,
			`{"choices":[{"index":0,"delta":{"refusal":"I'm sorry, "},"finish_reason":null}]}`,
			`{"choices":[{"index":0,"delta":{"refusal":"I can't help with that."},"finish_reason":null}]}`, finishChunk("stop"), "[DONE]"), OK, ""},
		{"plain, withheld by the content filter", jsonHeader, `{"choices":[{"index":0,"message":{"role":"assistant","content":null},"finish_reason":"content_filter"}]}`, OK, ""},
		{"plain, blank content_filter", jsonHeader, `{"choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"content_filter"}]}`, OK, ""},
		{"streamed, withheld by the content filter", sseHeader, sse(`{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`, finishChunk("content_filter"), "[DONE]"), OK, ""},
		{"plain, withheld by Zhipu's safety review", jsonHeader, `{"choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"sensitive"}]}`, OK, ""},
		{"streamed, withheld by Zhipu's safety review", sseHeader, sse(`{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":"sensitive"}]}`, "[DONE]"), OK, ""},
		{"plain, blank and stopped", jsonHeader, `{"choices":[{"index":0,"message":{"role":"assistant","content":""},"finish_reason":"stop"}]}`, SoftFail, ReasonEmpty},
		{"streamed, a typed ping between chunks (Claude's OpenAI compatibility)", sseHeader, sse(delta("Paris is "), `{"type": "ping"}`, delta("the capital."), finishChunk("stop"), "[DONE]"), OK, ""},
		{"streamed, event: ping between chunks", sseHeader, sse(delta("Paris is ")) + "event: ping\ndata: {}\n\n" + sse(delta("the capital."), finishChunk("stop"), "[DONE]"), OK, ""},
		{"streamed, event: message chunks", sseHeader, "event: message\n" + sse(delta("Paris is the capital."), finishChunk("stop"), "[DONE]"), OK, ""},
		{"streamed, only pings", sseHeader, "event: ping\ndata: {}\n\n" + sse(`{"type":"ping"}`), SoftFail, ReasonTruncated},
		{"streamed, an error event after the first chunk", sseHeader, sse(delta("Paris is ")) + "event: error\ndata: {\"message\":\"upstream overloaded\"}\n\n", SoftFail, ReasonErrorBody},
		{"streamed, a typed error object", sseHeader, sse(delta("Paris is "), `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`), SoftFail, ReasonErrorBody},
		{"streamed, the usage without choices", sseHeader, sse(delta("Paris is the capital."), finishChunk("stop"), `{"id":"x","usage":{"prompt_tokens":5,"completion_tokens":4,"total_tokens":9}}`, "[DONE]"), OK, ""},
		{"streamed, an event without choices or type", sseHeader, sse(delta("Paris is "), `{"id":"x"}`, finishChunk("stop"), "[DONE]"), SoftFail, ReasonMissingField},
		{"plain with reasoning", jsonHeader, `{"choices":[{"index":0,"message":{"role":"assistant","reasoning_content":"The user asks...","content":"Paris is the capital of France."},"finish_reason":"stop"}]}`, OK, ""},
		{"streamed reasoning, then content", sseHeader, sse(think("reasoning_content", "The user asks"), think("reasoning_content", " for a capital."), delta("Paris is the capital."), finishChunk("stop"), "[DONE]"), OK, ""},
		{"streamed reasoning (OpenRouter's name), then content", sseHeader, sse(think("reasoning", "Hmm."), delta("Paris is the capital."), finishChunk("stop"), "[DONE]"), OK, ""},
		{"streamed reasoning, then nothing", sseHeader, sse(think("reasoning_content", "The user asks"), finishChunk("stop"), "[DONE]"), SoftFail, ReasonEmpty},
		{"streamed reasoning, cut", sseHeader, sse(think("reasoning_content", "The user asks")), SoftFail, ReasonTruncated},
		// Mistral's reasoning models: content is an array of parts.
		{"plain parts", jsonHeader, `{"choices":[{"index":0,"message":{"role":"assistant","content":[{"type":"thinking","thinking":[{"type":"text","text":"The user asks"}]},{"type":"text","text":"Paris is "},{"type":"text","text":"the capital."}]},"finish_reason":"stop"}]}`, OK, ""},
		{"plain parts, thinking only", jsonHeader, `{"choices":[{"index":0,"message":{"role":"assistant","content":[{"type":"thinking","thinking":[{"type":"text","text":"The user asks"}]}]},"finish_reason":"stop"}]}`, SoftFail, ReasonEmpty},
		{"plain parts, a fallback phrase", jsonHeader, `{"choices":[{"index":0,"message":{"role":"assistant","content":[{"type":"text","text":"系统繁忙"}]},"finish_reason":"stop"}]}`, SoftFail, ReasonFallbackPhrase},
		// Parts without a type, or with one that is not a string, are
		// neither text nor thinking (a part {} crashed the judge).
		{"plain parts without a type", jsonHeader, `{"choices":[{"index":0,"message":{"role":"assistant","content":[{},{"type":1},{"type":null,"text":"x"},{"type":"text","text":"Paris is the capital."}]},"finish_reason":"stop"}]}`, OK, ""},
		{"plain, only a part without a type", jsonHeader, `{"choices":[{"message":{"content":[{}]}}]}`, SoftFail, ReasonEmpty},
		{"streamed parts without a type", sseHeader, sse(`{"choices":[{"index":0,"delta":{"content":[{},{"type":[]}]},"finish_reason":null}]}`, delta("Paris is the capital."), finishChunk("stop"), "[DONE]"), OK, ""},
		{"streamed parts", sseHeader, sse(`{"choices":[{"index":0,"delta":{"content":[{"type":"thinking","thinking":[{"type":"text","text":"Hmm"}]}]},"finish_reason":null}]}`,
			`{"choices":[{"index":0,"delta":{"content":[{"type":"text","text":"Paris is the capital."}]},"finish_reason":null}]}`, finishChunk("stop"), "[DONE]"), OK, ""},
	} {
		got := v.Classify(200, tc.header, []byte(tc.body))
		if got.Verdict != tc.want || got.Reason != tc.reason {
			t.Errorf("%s: %s/%s (%s); want %s/%s", tc.name, got.Verdict, got.Reason, got.Detail, tc.want, tc.reason)
		}
		if got.Chars != 0 && strings.Contains(tc.name, "nothing") {
			t.Errorf("%s: the thinking counted as %d characters of content", tc.name, got.Chars)
		}
	}
}

// eventStreamAsParsed is isEventStream's reference: mime.ParseMediaType's
// reading of the whole value.
func eventStreamAsParsed(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return ct != "" && err == nil && mt == "text/event-stream"
}

// FuzzIsEventStream holds isEventStream's look at the media type before
// the parse to mime.ParseMediaType's answer; its seeds run in go test.
func FuzzIsEventStream(f *testing.F) {
	for _, ct := range []string{"", "text/event-stream", "Text/Event-Stream", " text/event-stream ",
		"text/event-stream; charset=utf-8", "text/event-stream;", "text/event-stream; charset",
		"text/event-stream; a=1; a=2", "application/json", "application/json; charset=utf-8",
		"text/event-stream-x", "text/event-ſtream", "text/event-stream\t", "text /event-stream",
		"text/event-stream,text/plain", ";text/event-stream", "TEXT/EVENT-STREAM;CHARSET=UTF-8"} {
		f.Add(ct)
	}
	f.Fuzz(func(t *testing.T, ct string) {
		if got, want := isEventStream(ct), eventStreamAsParsed(ct); got != want {
			t.Errorf("isEventStream(%q) = %v, mime.ParseMediaType says %v", ct, got, want)
		}
	})
}
