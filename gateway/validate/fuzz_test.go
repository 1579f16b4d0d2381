package validate

import (
	"net/http"
	"slices"
	"testing"
)

// FuzzClassify feeds arbitrary bodies, plain and as streams, whole and cut
// in three pieces at arbitrary points, and checks what must always hold:
// no panic, a known verdict and reason, a reason exactly for soft
// failures, hard_fail exactly for non-2xx, and the same judgement however
// the body is split. The seed corpus is in testdata/fuzz/FuzzClassify.
func FuzzClassify(f *testing.F) {
	f.Add(200, []byte(completion("Paris is the capital of France.", "stop")), uint(7), uint(40), false)
	f.Add(200, []byte(sse(delta("Paris"), finishChunk("stop"), "[DONE]")), uint(3), uint(60), true)
	f.Add(200, []byte(sse(delta("系统繁忙"), delta("请稍后重试"))), uint(10), uint(11), true)
	f.Add(503, []byte(`{"error":{"message":"overloaded"}}`), uint(0), uint(0), false)
	f.Add(400, []byte(`{"error":{"type":"invalid_request_error","code":"context_length_exceeded"}}`), uint(5), uint(9), false)
	f.Add(200, []byte(sse(`{"code":500,"msg":"系统繁忙"}`)), uint(4), uint(8), true)
	f.Add(200, []byte("data: "+delta("Paris")+"\r\rdata: "+finishChunk("stop")+"\r\ndata: [DONE]\r"), uint(32), uint(1), true)
	f.Add(200, []byte(messageBody("end_turn", 9, textBlock("Paris is the capital of France."))), uint(11), uint(50), false)
	f.Add(200, []byte(answer("end_turn", 9, "Paris is", " the capital.")), uint(30), uint(90), true)
	f.Add(200, []byte(messageStart()+blockStart(0, `{"type":"text","text":""}`)+textDelta(0, "Paris")+overloaded), uint(20), uint(7), true)
	v := MustNew(Rules{MinLength: 3, Schema: `{"type":"object","required":["a"]}`})
	plain := MustNew(Rules{MinLength: 3})
	f.Add(200, []byte(responseStream("completed", "", 9, "Paris is", " the capital.")), uint(40), uint(120), true)
	f.Add(200, []byte(responseBody("incomplete", "max_output_tokens", 9, messageItem(outputText("Paris is")))), uint(30), uint(60), false)
	messages := MustNew(Rules{Format: FormatAnthropicMessages, MinLength: 3})
	responses := MustNew(Rules{Format: FormatOpenAIResponses, MinLength: 3})
	f.Fuzz(func(t *testing.T, status int, body []byte, cut1, cut2 uint, stream bool) {
		header := jsonHeader
		if stream {
			header = http.Header{"Content-Type": {"text/event-stream"}}
		}
		for _, val := range []*Validator{v, plain, messages, responses} {
			whole := val.Classify(status, header, body)
			if !slices.Contains([]Verdict{OK, SoftFail, HardFail, Rejected}, whole.Verdict) {
				t.Fatalf("unknown verdict %q", whole.Verdict)
			}
			if (whole.Verdict == SoftFail || whole.Verdict == Rejected) != (whole.Reason != ReasonNone) {
				t.Fatalf("verdict %s with reason %q", whole.Verdict, whole.Reason)
			}
			if whole.Verdict == SoftFail && !slices.Contains(Reasons, whole.Reason) ||
				whole.Verdict == Rejected && !slices.Contains(RejectedReasons, whole.Reason) {
				t.Fatalf("unknown reason %q of %s", whole.Reason, whole.Verdict)
			}
			if (status < 200 || status > 299) != (whole.Verdict == HardFail || whole.Verdict == Rejected) {
				t.Fatalf("status %d judged %s", status, whole.Verdict)
			}
			if whole.Verdict == Rejected && status != 400 {
				t.Fatalf("status %d judged %s", status, whole.Verdict)
			}
			if whole.Bytes != int64(len(body)) {
				t.Fatalf("bytes %d, body %d", whole.Bytes, len(body))
			}
			a := min(int(cut1%uint(len(body)+1)), len(body))
			b := min(a+int(cut2%uint(len(body)+1)), len(body))
			c := val.Start(status, header)
			c.Write(body[:a])
			c.Write(body[a:b])
			c.Write(body[b:])
			split := c.Finish()
			if split.Verdict != whole.Verdict || split.Reason != whole.Reason || split.Chars != whole.Chars {
				t.Fatalf("cut at %d and %d: %s/%s (%d chars), whole: %s/%s (%d chars)",
					a, b, split.Verdict, split.Reason, split.Chars, whole.Verdict, whole.Reason, whole.Chars)
			}
		}
	})
}
