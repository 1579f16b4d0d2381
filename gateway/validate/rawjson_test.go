package validate

import (
	"net/http"
	"testing"

	"github.com/hermes-failover/hermes/gateway/validate/internal/mapjudge"
)

// equivalencePairs are the same rules given to the validator and to the
// map-based judge it replaced (internal/mapjudge).
func equivalencePairs(t testing.TB) [][2]func(int, http.Header, []byte) Result {
	type pair struct {
		r Rules
		m mapjudge.Rules
	}
	schema := `{"type":"object","required":["a"]}`
	pairs := []pair{
		{Rules{}, mapjudge.Rules{}},
		{Rules{MinLength: 3, Schema: schema}, mapjudge.Rules{MinLength: 3, Schema: schema}},
		{Rules{RequiredFields: []string{"choices[0].message.content", "usage.total_tokens", "a.0.b", "é"}},
			mapjudge.Rules{RequiredFields: []string{"choices[0].message.content", "usage.total_tokens", "a.0.b", "é"}}},
		{Rules{Format: FormatJSON, RequiredFields: []string{"a", "b[1]"}},
			mapjudge.Rules{Format: mapjudge.FormatJSON, RequiredFields: []string{"a", "b[1]"}}},
		{Rules{RejectedCodes: map[string]Reason{"nope": ReasonInvalidRequest}},
			mapjudge.Rules{RejectedCodes: map[string]mapjudge.Reason{"nope": mapjudge.ReasonInvalidRequest}}},
	}
	var out [][2]func(int, http.Header, []byte) Result
	for _, p := range pairs {
		v, err := New(p.r)
		if err != nil {
			t.Fatal(err)
		}
		m, err := mapjudge.New(p.m)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, [2]func(int, http.Header, []byte) Result{
			v.Classify,
			func(status int, h http.Header, body []byte) Result {
				r := m.Classify(status, h, body)
				return Result{Verdict: Verdict(r.Verdict), Reason: Reason(r.Reason), Detail: r.Detail,
					Status: r.Status, Stream: r.Stream, Bytes: r.Bytes, Chars: r.Chars, Content: r.Content,
					FinishReason: r.FinishReason, Usage: Usage(r.Usage)}
			},
		})
	}
	return out
}

// FuzzRawEquivalence holds the raw-JSON navigator to the map-based judge
// it replaced: for any body, plain or streamed, and any status, both give
// the same Result. (The one allowed difference: when several top-level
// strings of an error template match different patterns, the map's
// random order chose which one the detail names; the navigator names the
// first in the document. Verdict and reason are the same.)
func FuzzRawEquivalence(f *testing.F) {
	f.Add(200, []byte(completion("Paris is the capital of France.", "stop")), false)
	f.Add(200, []byte(`{"choices":[{"message":{"content":"a\u00e9\ud83d\ude00\"b"},"finish_reason":"stop"}],"usage":{"prompt_tokens":3,"completion_tokens":4}}`), false)
	f.Add(200, []byte(`{"choices":null,"error":{"x":1},"choices":[{"message":{"content":"hi there"}}]}`), false)
	f.Add(200, []byte(`{"choic\u0065s":[{"index":0,"message":{"content":"ok ok","tool_calls":[]},"finish_reason":"length"}]}`), false)
	f.Add(200, []byte(`{"code":"503","msg":"系统繁忙","error":null}`), false)
	f.Add(200, []byte(`{"a":[{"b":1}],"b":[0,{}],"Choices":[]}`), false)
	f.Add(200, []byte("{\"choices\":[{\"message\":{\"content\":\"bad \xff utf8\"}}]}"), false)
	f.Add(200, []byte(`[1,2]`), false)
	f.Add(200, []byte(`{"x": 1} trailing`), false)
	f.Add(200, []byte(sse(delta("Paris"), finishChunk("stop"), "[DONE]")), true)
	f.Add(200, []byte(sse(delta("系统繁忙"), delta("请稍后重试"))), true)
	f.Add(200, []byte(sse(`{"code":500,"msg":"系统繁忙"}`)), true)
	f.Add(200, []byte(sse(`{"choices":[{"index":1,"delta":{"content":"x"}},{"index":0,"delta":{"content":"y","tool_calls":[{}]},"finish_reason":"stop"}],"usage":{"total_tokens":12}}`, "[DONE]")), true)
	f.Add(200, []byte(sse(`{"choices":[{"index":"0","delta":{"content":"x"}},{"index":0.0,"delta":{"function_call":{}}}]}`, `{"choices":{}}`, `"s"`)), true)
	f.Add(400, []byte(`{"error":{"type":"invalid_request_error","code":"nope"}}`), false)
	f.Add(400, []byte(`{"error":{"code":"context_length_exceeded","code":"x"}}`), false)
	pairs := equivalencePairs(f)
	f.Fuzz(func(t *testing.T, status int, body []byte, stream bool) {
		header := jsonHeader
		if stream {
			header = http.Header{"Content-Type": {"text/event-stream"}}
		}
		for i, p := range pairs {
			got, want := p[0](status, header, body), p[1](status, header, body)
			if got.Reason == ReasonErrorBody && want.Reason == ReasonErrorBody {
				got.Detail, want.Detail = "", ""
			}
			if got != want {
				t.Fatalf("rules %d, body %q:\nnavigator %+v\nmap       %+v", i, body, got, want)
			}
		}
	})
}

// TestRawJSON pins the navigator's answers where encoding/json's map
// decides: duplicate names, escapes, invalid UTF-8, null.
func TestRawJSON(t *testing.T) {
	doc, ok := parseJSON([]byte(` {"a":1,"a":{"b":[null,"x\u00e9"]},"c\u0064":"\ud83d\ude00","e":"` + "\xff" + `","n":null} `))
	if !ok {
		t.Fatal("valid JSON refused")
	}
	if s, ok := rawGetString(doc, "a", "b", 1); !ok || s != "xé" {
		t.Errorf("a.b[1] = %q, %v; want xé (the last a)", s, ok)
	}
	if _, ok := rawGet(doc, "a", "b", 0); ok {
		t.Error("a.b[0] is null: want not there")
	}
	if s, ok := rawGetString(doc, "cd"); !ok || s != "😀" {
		t.Errorf("cd (an escaped name) = %q, %v", s, ok)
	}
	if s, ok := rawGetString(doc, "e"); !ok || s != "\ufffd" {
		t.Errorf("e = %q, %v; want U+FFFD as encoding/json gives", s, ok)
	}
	if doc.field("n").present() || len(doc.field("n")) == 0 {
		t.Error("n: want there, null")
	}
	if _, ok := parseJSON([]byte(`{"a":1} {}`)); ok {
		t.Error("two documents accepted")
	}
}

// BenchmarkJudgeStream judges a stream of 20 chunk events, as the bench's
// upstream sends them, with the navigator and with the map-based judge it
// replaced.
func BenchmarkJudgeStream(b *testing.B) {
	var events []string
	for range 19 {
		events = append(events, `{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1733450000,"model":"bench-model","sent_ns":1733450000123456789,"choices":[{"index":0,"delta":{"content":"token "},"finish_reason":null}]}`)
	}
	events = append(events, finishChunk("stop"), "[DONE]")
	body := []byte(sse(events...))
	header := http.Header{"Content-Type": {"text/event-stream"}}
	pairs := equivalencePairs(b)
	for _, impl := range []struct {
		name string
		f    func(int, http.Header, []byte) Result
	}{{"navigator", pairs[0][0]}, {"map", pairs[0][1]}} {
		b.Run(impl.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if r := impl.f(200, header, body); r.Verdict != OK {
					b.Fatal(r)
				}
			}
		})
	}
}
