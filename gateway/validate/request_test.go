package validate

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// maxTokensAsDecoded is MaxTokens's reference: encoding/json's reading
// of the whole body, or false when it is not a JSON object.
func maxTokensAsDecoded(body []byte) (int, bool) {
	var doc map[string]json.RawMessage
	if json.Unmarshal(body, &doc) != nil || doc == nil {
		return 0, false
	}
	n := int64(0)
	for _, k := range capKeys {
		v, err := strconv.ParseInt(string(bytes.TrimSpace(doc[k])), 10, 64)
		if err != nil || v <= 0 || v > 1<<31-1 {
			continue
		}
		if n == 0 || v < n {
			n = v
		}
	}
	return int(n), true
}

// maxTokensIn feeds body to a MaxTokens in pieces of size n.
func maxTokensIn(body []byte, n int) int {
	var m MaxTokens
	for len(body) > 0 {
		k := min(n, len(body))
		m.Write(body[:k])
		body = body[k:]
	}
	return m.Tokens()
}

func TestMaxTokens(t *testing.T) {
	long := strings.Repeat(`A long prompt, with \"quotes\", braces {[ and a max_tokens: 5 in its text. `, 200)
	for _, tc := range []struct {
		body string
		want int
	}{
		{`{"model":"m","messages":[{"role":"user","content":"Hi"}],"max_tokens":40}`, 40},
		{`{"max_tokens":40,"model":"m"}`, 40},
		{` {"max_completion_tokens" : 256 , "stream":true}`, 256},
		{`{"max_tokens":100,"max_completion_tokens":64}`, 64},
		{`{"model":"gpt-5","input":"Hi","max_output_tokens":300}`, 300},
		{`{"max_output_tokens":30,"max_tokens":100}`, 30},
		{`{"max_completion_tokens":64,"max_tokens":100}`, 64},
		{`{"max_tokens":10,"max_tokens":30}`, 30},  // the last one, as encoding/json reads it
		{`{"max_tokens":10,"max_tokens":null}`, 0}, // replaced by null
		{`{"max_tokens":null}`, 0},
		{`{"max_tokens":"40"}`, 0},
		{`{"max_tokens":-1}`, 0},
		{`{"max_tokens":0}`, 0},
		{`{"max_tokens":1.5}`, 0},
		{`{"max_tokens":1e3}`, 0},
		{`{"max_tokens":99999999999999999999}`, 0}, // no cap a provider takes
		{`{"max_tokens":2147483648,"max_completion_tokens":2147483647}`, 1<<31 - 1},
		{`{"max\u005ftokens":12}`, 12},
		{`{"options":{"max_tokens":12},"messages":[{"max_tokens":7}]}`, 0}, // not at the top level
		{`{"messages":[{"role":"user","content":"` + long + `"}],"max_tokens":77}`, 77},
		{`{"content":"\\","max_tokens":8}`, 8},
		{`{"content":"\\\"max_tokens\":9","max_tokens":8}`, 8},
		{`[{"max_tokens":5}]`, 0},
		{``, 0},
		{`max_tokens=5`, 0},
	} {
		want, ok := maxTokensAsDecoded([]byte(tc.body))
		if ok && want != tc.want {
			t.Fatalf("%.60s: the test expects %d, encoding/json reads %d", tc.body, tc.want, want)
		}
		for _, n := range []int{1, 2, 3, 7, 64, 1 << 20} {
			if got := maxTokensIn([]byte(tc.body), n); got != tc.want {
				t.Errorf("%.60s… in pieces of %d: %d, want %d", tc.body, n, got, tc.want)
			}
		}
	}
}

// FuzzMaxTokens holds MaxTokens, fed any body cut at any two points, to
// encoding/json's reading of the whole body whenever it is a JSON object.
func FuzzMaxTokens(f *testing.F) {
	f.Add([]byte(`{"model":"m","messages":[{"role":"user","content":"Hi \"x\""}],"max_tokens":40}`), uint(5), uint(17))
	f.Add([]byte(`{"max_completion_tokens":64,"max_tokens":100,"n":[1,{"a":"}"}]}`), uint(30), uint(3))
	f.Add([]byte(`{"max\u005ftokens":12,"max_tokens":1e3}`), uint(8), uint(8))
	f.Add([]byte(`{"input":"Hi","max_output_tokens":300,"max_tokens":1}`), uint(9), uint(20))
	f.Fuzz(func(t *testing.T, body []byte, cut1, cut2 uint) {
		a := int(cut1 % uint(len(body)+1))
		b := min(a+int(cut2%uint(len(body)+1)), len(body))
		var m MaxTokens
		m.Write(body[:a])
		m.Write(body[a:b])
		m.Write(body[b:])
		got := m.Tokens()
		if want, ok := maxTokensAsDecoded(body); ok && got != want {
			t.Fatalf("cut at %d and %d: %d; encoding/json reads %d", a, b, got, want)
		}
		if got < 0 {
			t.Fatalf("a cap of %d", got)
		}
	})
}

// usage is a usage object of n completion tokens.
func usage(n int) string {
	return fmt.Sprintf(`{"prompt_tokens":12,"completion_tokens":%d,"total_tokens":%d}`, n, n+12)
}

// TestCallerMaxTokens: a completion that finish_reason "length" ended is
// the route's fault (truncated) when it came short of the caller's cap or
// the caller set none, and whole when the caller's cap ended it.
func TestCallerMaxTokens(t *testing.T) {
	words := strings.TrimSpace(strings.Repeat("Paris is the capital of France. ", 40)) // 1279 bytes
	plain := func(content, usage string) string {
		return `{"choices":[{"index":0,"message":{"role":"assistant","content":"` + content + `"},"finish_reason":"length"}],"usage":` + usage + `}`
	}
	stream := func(content, usage string) string {
		events := []string{delta(content), finishChunk("length")}
		if usage != "" {
			events = append(events, `{"choices":[],"usage":`+usage+`}`)
		}
		return sse(append(events, "[DONE]")...)
	}
	thinking := sse(`{"choices":[{"index":0,"delta":{"reasoning_content":"`+words[:200]+`"},"finish_reason":null}]}`, finishChunk("length"), "[DONE]")
	for _, tc := range []struct {
		name      string
		header    http.Header
		body      string
		maxTokens int
		want      Verdict
		reason    Reason
	}{
		{"plain, no cap", jsonHeader, plain(words, usage(300)), 0, SoftFail, ReasonTruncated},
		{"plain, at the caller's cap", jsonHeader, plain(words, usage(300)), 300, OK, ""},
		{"plain, near the caller's cap", jsonHeader, plain(words, usage(290)), 300, OK, ""},
		{"plain, half the caller's cap", jsonHeader, plain(words, usage(150)), 300, SoftFail, ReasonTruncated},
		{"plain, cap without usage, bytes past it", jsonHeader, plain(words, `null`), 300, OK, ""},
		{"plain, cap without usage, fewer bytes than it", jsonHeader, plain(words[:100], `null`), 300, SoftFail, ReasonTruncated},
		{"plain, a short reply at a small cap", jsonHeader, plain("Par", usage(1)), 1, OK, ""},
		{"plain, blank at the cap (thinking spent it)", jsonHeader, plain("", usage(64)), 64, OK, ""},
		{"plain, a fallback phrase at the cap", jsonHeader, plain("系统繁忙", usage(8)), 8, SoftFail, ReasonFallbackPhrase},
		{"stream, no cap", sseHeader, stream(words, ""), 0, SoftFail, ReasonTruncated},
		{"stream, at the caller's cap", sseHeader, stream(words, usage(300)), 300, OK, ""},
		{"stream, short of the caller's cap", sseHeader, stream(words, usage(100)), 300, SoftFail, ReasonTruncated},
		{"stream without usage, bytes past the cap", sseHeader, stream(words, ""), 300, OK, ""},
		{"stream without usage, fewer bytes than the cap", sseHeader, stream(words[:50], ""), 300, SoftFail, ReasonTruncated},
		{"stream, thinking spent the cap", sseHeader, thinking, 150, OK, ""},
		{"stream without usage, blank: hidden thinking spent the cap", sseHeader, sse(`{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`, finishChunk("length"), "[DONE]"), 1000, OK, ""},
		{"stream without usage, blank, no cap", sseHeader, sse(`{"choices":[{"index":0,"delta":{"role":"assistant","content":""},"finish_reason":null}]}`, finishChunk("length"), "[DONE]"), 0, SoftFail, ReasonTruncated},
		{"stream, at the cap by a usage event without choices", sseHeader, sse(delta(words[:100]), finishChunk("length"), `{"usage":`+usage(300)+`}`, "[DONE]"), 300, OK, ""},
		// Thinking a gateway left out of completion_tokens still spent
		// the cap (Gemini through several OpenAI-compatible gateways): it
		// shows in total_tokens or in reasoning_tokens.
		{"plain, thinking only in total_tokens", jsonHeader, plain(words[:100], `{"prompt_tokens":21,"completion_tokens":18,"total_tokens":517,"completion_tokens_details":{"reasoning_tokens":478}}`), 500, OK, ""},
		{"plain, thinking only in reasoning_tokens", jsonHeader, plain(words[:100], `{"prompt_tokens":21,"completion_tokens":18,"total_tokens":39,"completion_tokens_details":{"reasoning_tokens":478}}`), 500, OK, ""},
		{"plain, blank, completion_tokens 0, thinking in total_tokens", jsonHeader, plain("", `{"prompt_tokens":21,"completion_tokens":0,"total_tokens":81,"completion_tokens_details":{"reasoning_tokens":60}}`), 64, OK, ""},
		{"plain, thinking counted as OpenAI counts it, short of the cap", jsonHeader, plain(words[:100], `{"prompt_tokens":21,"completion_tokens":200,"total_tokens":221,"completion_tokens_details":{"reasoning_tokens":150}}`), 500, SoftFail, ReasonTruncated},
		{"stream, thinking only in total_tokens", sseHeader, stream(words[:100], `{"prompt_tokens":21,"completion_tokens":18,"total_tokens":517}`), 500, OK, ""},
		{"stream, cut before the finish, cap or not", sseHeader, sse(delta(words)), 300, SoftFail, ReasonTruncated},
		{"stream, stop within the cap", sseHeader, sse(delta("Paris."), finishChunk("stop"), "[DONE]"), 300, OK, ""},
	} {
		for _, rules := range []Rules{{}, {MinLength: 20, Schema: `{"type":"object"}`}} {
			v := MustNew(rules)
			for _, discard := range []bool{false, true} {
				c := v.Start(200, tc.header)
				if discard {
					c.DiscardContent()
				}
				c.Write([]byte(tc.body))
				c.CallerMaxTokens(tc.maxTokens)
				got := c.Finish()
				want, reason := tc.want, tc.reason
				if rules.MinLength > 0 && tc.name == "stream, stop within the cap" {
					continue // judged by the content rules, not the cap
				}
				if got.Verdict != want || got.Reason != reason {
					t.Errorf("%s (rules %+v, discard %v): %s/%s (%s); want %s/%s", tc.name, rules, discard, got.Verdict, got.Reason, got.Detail, want, reason)
				}
				if got.FinishReason == "" && !strings.Contains(tc.name, "cut") {
					t.Errorf("%s: no finish reason", tc.name)
				}
			}
		}
	}
}

// TestUsageGenerated: the tokens a reply generated are read from its
// usage however the gateway counted the thinking.
func TestUsageGenerated(t *testing.T) {
	for _, tc := range []struct {
		usage string
		want  Usage
		gen   int
	}{
		{`{"prompt_tokens":12,"completion_tokens":30,"total_tokens":42}`, Usage{12, 30, 42, 0}, 30},
		{`{"prompt_tokens":12,"completion_tokens":30}`, Usage{12, 30, 42, 0}, 30},
		// OpenAI: the thinking is inside completion_tokens.
		{`{"prompt_tokens":12,"completion_tokens":30,"total_tokens":42,"completion_tokens_details":{"reasoning_tokens":20}}`, Usage{12, 30, 42, 20}, 30},
		// A gateway that left Gemini's thoughts out of completion_tokens.
		{`{"prompt_tokens":21,"completion_tokens":0,"total_tokens":81,"completion_tokens_details":{"reasoning_tokens":60}}`, Usage{21, 0, 81, 60}, 60},
		{`{"prompt_tokens":21,"completion_tokens":18,"total_tokens":39,"completion_tokens_details":{"reasoning_tokens":478}}`, Usage{21, 18, 39, 478}, 478},
		{`{"prompt_tokens":21,"completion_tokens":18,"total_tokens":517}`, Usage{21, 18, 517, 0}, 496},
		{`{"completion_tokens_details":null,"completion_tokens":"7"}`, Usage{}, 0},
	} {
		r := MustNew(Rules{}).Classify(200, jsonHeader, []byte(`{"choices":[{"index":0,"message":{"role":"assistant","content":"Paris."},"finish_reason":"stop"}],"usage":`+tc.usage+`}`))
		if r.Usage != tc.want || r.Usage.Generated() != tc.gen {
			t.Errorf("%s: %+v, generated %d; want %+v, %d", tc.usage, r.Usage, r.Usage.Generated(), tc.want, tc.gen)
		}
	}
}
