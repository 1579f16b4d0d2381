package validate

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// benchText is a realistic 1.15 kB completion: paragraphs, a list, a quote
// and an accented word, so that its JSON holds \n, \" and (once encoded
// with escapeNonASCII) \u00e9, as providers' completions nearly always do.
var benchText = strings.Repeat("The capital of France is Paris, on the Seine.\n\n"+
	"- It has about 2.1 million people;\n- its café culture is \"famous\".\n", 10)

// escapeNonASCII encodes s as a JSON string with every non-ASCII rune as
// a \u escape (as OpenAI's Python encoder writes them).
func escapeNonASCII(s string) string {
	b, _ := json.Marshal(s)
	var out strings.Builder
	for _, r := range string(b) {
		if r < 0x80 {
			out.WriteRune(r)
			continue
		}
		out.WriteString(`\u00` + "0123456789abcdef"[r>>4&0xf:r>>4&0xf+1] + "0123456789abcdef"[r&0xf:r&0xf+1])
	}
	return out.String()
}

// plainBody is a 1.5 kB chat completion whose content is text as a raw
// JSON string.
func plainBody(content string) []byte {
	return []byte(`{"id":"chatcmpl-bench","object":"chat.completion","created":1733450000,"model":"bench-model",` +
		`"choices":[{"index":0,"message":{"role":"assistant","content":` + content + `},"logprobs":null,"finish_reason":"stop"}],` +
		`"usage":{"prompt_tokens":21,"completion_tokens":270,"total_tokens":291},"system_fingerprint":"fp_bench"}`)
}

// BenchmarkJudgePlain judges a 1.5 kB chat completion read whole: one
// whose content has no escape (as the bench's upstream sends it) and one
// with \n, \" and \u00e9 in it (as real providers send it).
func BenchmarkJudgePlain(b *testing.B) {
	noEscape := strings.NewReplacer("\n", " ", `"`, "'", "é", "e").Replace(benchText)
	for _, c := range []struct {
		name    string
		content string
	}{
		{"noescape", `"` + noEscape + `"`},
		{"escaped", escapeNonASCII(benchText)},
	} {
		body := plainBody(c.content)
		judge := judgedRules(b)[0]
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if r := judge(200, jsonHeader, body); r.Verdict != OK {
					b.Fatal(r)
				}
			}
		})
		// As hermes proxy judges it: nobody reads the Result's Content.
		v := MustNew(Rules{})
		b.Run(c.name+"/discard", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				cl := v.Start(200, jsonHeader)
				cl.DiscardContent()
				_, _ = cl.Write(body)
				if r := cl.Finish(); r.Verdict != OK {
					b.Fatal(r)
				}
			}
		})
	}
}

// BenchmarkJudgeStreamEscaped is BenchmarkJudgeStream with deltas that
// hold escapes (\n, \", \u00e9), as real providers' streams do.
func BenchmarkJudgeStreamEscaped(b *testing.B) {
	var events []string
	pieces := []string{`"The capital\n"`, `"is \"Paris\""`, `" caf\u00e9 "`, `"token "`}
	for i := range 19 {
		events = append(events, `{"id":"chatcmpl-bench","object":"chat.completion.chunk","created":1733450000,"model":"bench-model","sent_ns":1733450000123456789,"choices":[{"index":0,"delta":{"content":`+pieces[i%len(pieces)]+`},"finish_reason":null}]}`)
	}
	events = append(events, finishChunk("stop"), "[DONE]")
	body := []byte(sse(events...))
	header := http.Header{"Content-Type": {"text/event-stream"}}
	judge := judgedRules(b)[0]
	b.ReportAllocs()
	for b.Loop() {
		if r := judge(200, header, body); r.Verdict != OK {
			b.Fatal(r)
		}
	}
}

// BenchmarkJudgePlainCoded is the discarding BenchmarkJudgePlain for a
// reply in each content coding, as hermes proxy judges one a provider
// compressed: its cost over the uncoded reply is the decoding.
func BenchmarkJudgePlainCoded(b *testing.B) {
	body := plainBody(escapeNonASCII(benchText))
	v := MustNew(Rules{})
	for _, ce := range []string{"gzip", "br", "zstd", "deflate"} {
		coded := encode(b, ce, body)
		b.Run(ce, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(coded)))
			for b.Loop() {
				cl := v.StartEncoded(200, "application/json", ce)
				cl.DiscardContent()
				_, _ = cl.Write(coded)
				if r := cl.Finish(); r.Verdict != OK {
					b.Fatal(r)
				}
			}
		})
	}
}

// BenchmarkMaxTokens reads the caller's cap from a request body as it
// passes: a short chat request (the bench's, 230 bytes) and one of a
// long conversation (64 KiB, max_tokens at its end), fed in 4 KiB
// pieces as a body streams.
func BenchmarkMaxTokens(b *testing.B) {
	short := []byte(`{"model":"bench-model","messages":[{"role":"system","content":"You are a helpful assistant."},{"role":"user","content":"What is the capital of France? Answer in one short sentence."}],"max_tokens":64}`)
	msg, _ := json.Marshal(strings.Repeat(benchText, 56))
	long := []byte(`{"model":"bench-model","messages":[{"role":"user","content":` + string(msg) + `}],"temperature":0.2,"max_tokens":512}`)
	for _, bc := range []struct {
		name string
		body []byte
	}{{"short", short}, {"long", long}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(bc.body)))
			b.ReportAllocs()
			for b.Loop() {
				var m MaxTokens
				for p := bc.body; len(p) > 0; {
					n := min(4096, len(p))
					m.Write(p[:n])
					p = p[n:]
				}
				if m.Tokens() == 0 {
					b.Fatal("no cap read")
				}
			}
		})
	}
}
