package validate

import (
	"bytes"
	"net/http"
	"reflect"
	"testing"
)

// replyDocs are documents where what a reply records depends on the
// order of members: names given twice, nested choices, values of the
// wrong kind.
var replyDocs = []string{
	`{"choices":[{"delta":{"reasoning_content":"a","reasoning":"b","refusal":"c","refusal":null},"message":{"reasoning":"d","reasoning_content":"e","content":[{"type":"text","text":"f"}]}}]}`,
	`{"choices":[{"message":{"content":"first"}}],"choices":[{"message":{"content":"second"},"finish_reason":"stop"}]}`,
	`{"choices":[{"message":{"content":"x"}}],"choices":null}`,
	`{"choices":[{"message":{"content":"a","tool_calls":[{}]},"message":{"content":""}}]}`,
	`{"choices":[{"delta":{"content":"a"},"delta":"b","index":0,"index":1}]}`,
	`{"choices":[{"index":1,"delta":{"content":"x"}},{"index":0,"delta":{"content":"y"},"finish_reason":"stop"},3,null,[{"delta":{}}]]}`,
	`{"choices":{"0":{"message":{"content":"x"}}},"error":null,"error":{"m":1},"usage":{"total_tokens":1},"usage":{"total_tokens":2}}`,
	`{"choic\u0065s":[{"m\u0065ssage":{"cont\u0065nt":"\u0041\ud83d\ude00","tool_calls":{"a":[1]}}}]}`,
	"{\"choices\":[{\"message\":{\"content\":\"bad \xff utf8\",\"\xff\":1}}],\"\xffchoices\":2}",
	`[{"choices":[{"message":{"content":"x"}}]}]`, `"choices"`, `{}`, `{"choices":[]}`,
	`{"a":{"choices":[{"message":{"content":"nested"}}]},"choices":[[{"message":{"content":"deep"}}]]}`,
}

// replyBodies are replyDocs, the bodies of judgedCases and their stream
// events' data.
func replyBodies() [][]byte {
	var out [][]byte
	for _, d := range replyDocs {
		out = append(out, []byte(d))
	}
	for _, c := range judgedCases() {
		out = append(out, c.Body)
		for line := range bytes.SplitSeq(c.Body, []byte("\n")) {
			if data, ok := bytes.CutPrefix(line, []byte("data: ")); ok {
				out = append(out, data)
			}
		}
	}
	return out
}

// TestReplyAsWalked: what scanJSON records is what a walk over the
// document with rawJSON's fields and elements finds.
func TestReplyAsWalked(t *testing.T) {
	for _, b := range replyBodies() {
		checkReply(t, b)
	}
}

// FuzzReply holds reply.scan to validJSON and to the walk over the
// document.
func FuzzReply(f *testing.F) {
	for _, d := range replyDocs {
		f.Add([]byte(d))
	}
	f.Fuzz(checkReply)
}

func checkReply(t *testing.T, b []byte) {
	var r reply
	ok := r.scan(b)
	if ok != validJSON(b) {
		t.Fatalf("scan(%q) = %v, validJSON %v", b, ok, !ok)
	}
	if !ok {
		return
	}
	doc := rawJSON(bytes.TrimSpace(b))
	same := func(what string, got, want rawJSON) {
		t.Helper()
		if !bytes.Equal(got, want) || (got == nil) != (want == nil) {
			t.Fatalf("%q: %s recorded %q, walked %q", b, what, got, want)
		}
	}
	same("doc", r.doc, doc)
	top := doc.fields("choices", "error", "usage")
	same("choices", r.choices, top[0])
	same("error", r.error, top[1])
	same("usage", r.usage, top[2])
	var elems []rawJSON
	top[0].elements(func(v rawJSON) bool { elems = append(elems, v); return true })
	if len(elems) != len(r.choice) {
		t.Fatalf("%q: %d choices recorded, %d walked", b, len(r.choice), len(elems))
	}
	for i, e := range elems {
		ch := r.choice[i]
		same("choice", ch.value, e)
		f := e.fields("index", "finish_reason", "delta", "message")
		same("index", ch.index, f[0])
		same("finish_reason", ch.finish, f[1])
		for j, m := range []message{ch.delta, ch.message} {
			same("delta or message", m.value, f[2+j])
			g := f[2+j].fields("content", "tool_calls", "function_call")
			same("content", m.content, g[0])
			same("tool_calls", m.toolCalls, g[1])
			same("function_call", m.functionCall, g[2])
			var refusal, reasoning rawJSON // each name's last value; the two names of thinking share one
			f[2+j].members(func(n, v rawJSON) {
				switch {
				case n.equals("refusal"):
					refusal = v
				case n.equals("reasoning_content"), n.equals("reasoning"):
					reasoning = v
				}
			})
			same("refusal", m.refusal, refusal)
			same("reasoning", m.reasoning, reasoning)
		}
	}
	for _, p := range replyPaths {
		got, gotOK := r.lookup(p)
		want, wantOK := p.lookupRaw(doc)
		if gotOK != wantOK || !bytes.Equal(got, want) {
			t.Fatalf("%q: lookup %s = %q, %v; lookupRaw %q, %v", b, p, got, gotOK, want, wantOK)
		}
	}
	r.reset()
	if r.doc != nil || r.choices != nil || r.error != nil || r.usage != nil || len(r.choice) != 0 ||
		!reflect.DeepEqual(r.inline, [1]choice{}) {
		t.Fatalf("reset kept a view of the document: %+v", r)
	}
	for _, ch := range r.choice[:cap(r.choice)] {
		if !reflect.DeepEqual(ch, choice{}) {
			t.Fatalf("reset kept a view of the document: %+v", ch)
		}
	}
}

// replyPaths are required fields through and around what a reply records.
var replyPaths = func() []jsonPath {
	var out []jsonPath
	for _, s := range []string{"choices", "choices[0]", "choices[1]", "choices.x", "choices[0].message", "choices[0].message.content",
		"choices[1].delta.content", "choices[0].delta", "choices[0].index", "choices[0].message.tool_calls[0]", "choices[0].0",
		"usage.total_tokens", "error", "a", "0", "choices[0][0]", "choices[0].choices"} {
		p, err := parsePath(s)
		if err != nil {
			panic(err)
		}
		out = append(out, p)
	}
	return out
}()

// TestJudgeInPlace: the completion judged from the bytes in place is the
// text encoding/json decodes: escapes, surrogate pairs, a lone surrogate
// and bad bytes as U+FFFD, a member named twice as its last value.
func TestJudgeInPlace(t *testing.T) {
	v := MustNew(Rules{})
	tests := []struct {
		name    string
		header  http.Header
		body    string
		verdict Verdict
		content string
	}{
		{"escapes", jsonHeader, `{"choices":[{"message":{"content":"a\nb \"c\" caf\u00e9 \/ \t\ud83d\ude00"},"finish_reason":"stop"}]}`, OK, "a\nb \"c\" café / \t😀"},
		{"lone surrogate", jsonHeader, `{"choices":[{"message":{"content":"x \ud83d y \ude00\ud83d"},"finish_reason":"stop"}]}`, OK, "x \ufffd y \ufffd\ufffd"},
		{"invalid utf-8", jsonHeader, "{\"choices\":[{\"message\":{\"content\":\"bad \xff\xfe utf8\"},\"finish_reason\":\"stop\"}]}", OK, "bad \ufffd\ufffd utf8"},
		{"choices twice", jsonHeader, `{"choices":[{"message":{"content":"first"}}],"choices":[{"message":{"content":"second one"},"finish_reason":"stop"}]}`, OK, "second one"},
		{"message twice", jsonHeader, `{"choices":[{"message":{"content":"a","tool_calls":[{}]},"message":{"content":" "},"finish_reason":"stop"}]}`, SoftFail, " "},
		{"content twice", jsonHeader, `{"choices":[{"message":{"content":"a","content":"b\u00e9"},"finish_reason":"stop"}]}`, OK, "bé"},
		{"stream escapes", sseHeader, sse(`{"choices":[{"delta":{"content":"caf\u00e9\n"}}]}`, `{"choices":[{"delta":{"content":"\"x\" \ud83d\ude00 \ud83d"},"finish_reason":"stop"}]}`, "[DONE]"), OK, "café\n\"x\" 😀 \ufffd"},
		{"stream delta twice", sseHeader, sse(`{"choices":[{"delta":{"content":"lost"},"delta":{"content":"kept"},"finish_reason":"stop"}]}`), OK, "kept"},
		{"stream bad bytes", sseHeader, sse("{\"choices\":[{\"delta\":{\"content\":\"\xc3(\"},\"finish_reason\":\"stop\"}]}"), OK, "\ufffd("},
	}
	for _, tt := range tests {
		r := v.Classify(200, tt.header, []byte(tt.body))
		if r.Verdict != tt.verdict || r.Content != tt.content {
			t.Errorf("%s: %s/%s %q, want %s %q", tt.name, r.Verdict, r.Reason, r.Content, tt.verdict, tt.content)
		}
		if want := len([]rune(tt.content)); r.Chars != want {
			t.Errorf("%s: %d characters, want %d", tt.name, r.Chars, want)
		}
	}
}
