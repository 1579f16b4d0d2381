package fakeprovider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/hermes-failover/hermes/fakeprovider"
	"github.com/hermes-failover/hermes/gateway/validate"
	"github.com/hermes-failover/hermes/internal/faults"
)

// TestKindsCoverTheFaultCatalogue keeps the provider's kinds and
// internal/faults' catalogue under the same names.
func TestKindsCoverTheFaultCatalogue(t *testing.T) {
	for _, f := range faults.Catalogue {
		if _, err := fakeprovider.ParseKind(string(f)); err != nil {
			t.Errorf("fault %q of internal/faults: %v", f, err)
		}
	}
	if k, err := fakeprovider.ParseKind("error_body"); err != nil || k != fakeprovider.ErrorInOK {
		t.Errorf("error_body = %q, %v; want error_in_200", k, err)
	}
	if _, err := fakeprovider.ParseKind("nonsense"); err == nil || !strings.Contains(err.Error(), "error_in_200") {
		t.Errorf("an unknown kind: %v; want an error listing the kinds", err)
	}
}

// TestErrorRepliesMatchTheFaultServer checks that every fault of
// internal/faults' catalogue that answers with an HTTP error gets the same
// status, Retry-After and body from the provider, so the lab and the
// tests see the same replies.
func TestErrorRepliesMatchTheFaultServer(t *testing.T) {
	fs := faults.Start(t)
	p := fakeprovider.New()
	srv := httptest.NewServer(p.Handler())
	defer srv.Close()
	defer p.Close()
	compared := 0
	for _, f := range faults.Catalogue {
		switch f {
		case faults.ResetBeforeHeaders, faults.NoResponse, faults.SlowFirstToken, faults.StreamCut, faults.Stall:
			continue // no reply to compare, or a wait
		}
		code, retry, body := post(t, fs.BaseURL(f), "Hi")
		if code < 400 {
			continue
		}
		compared++
		p.SetFault("r", fakeprovider.Fault{Kind: fakeprovider.Kind(f), Percent: 100})
		gotCode, gotRetry, gotBody := post(t, srv.URL+"/r/v1", "Hi")
		if gotCode != code || gotRetry != retry || gotBody != body {
			t.Errorf("%s: the provider answers %d (Retry-After %q) %s\nthe fault server %d (Retry-After %q) %s",
				f, gotCode, gotRetry, gotBody, code, retry, body)
		}
	}
	if compared != 6 {
		t.Errorf("compared %d error replies, want the 6 of the catalogue", compared)
	}
}

// post sends a plain chat completion asking content to the OpenAI base
// URL url, and returns the reply's status, Retry-After and body.
func post(t *testing.T, url, content string) (int, string, string) {
	t.Helper()
	req, _ := json.Marshal(map[string]any{"model": fakeprovider.Model, "messages": []any{map[string]any{"role": "user", "content": content}}})
	resp, err := http.Post(url+"/chat/completions", "application/json", bytes.NewReader(req))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header.Get("Retry-After"), string(b)
}

func chat(t *testing.T, url string) (int, string) {
	t.Helper()
	code, _, body := post(t, url, "What is the capital of France?")
	return code, body
}

// TestFaultHitsItsShareOfOneRoute sets 30 % error_in_200 on free over
// HTTP, as `hermes lab fault` does: exactly 3 of every 10 of free's
// completions carry the error template, paid's none, and healing ends it.
func TestFaultHitsItsShareOfOneRoute(t *testing.T) {
	p := fakeprovider.New()
	srv := httptest.NewServer(p.Handler())
	defer srv.Close()
	defer p.Close()
	c := fakeprovider.NewClient(srv.URL)
	ctx := context.Background()
	if err := c.SetFault(ctx, "free", fakeprovider.Fault{Kind: "error_body", Percent: 30}); err != nil {
		t.Fatal(err)
	}
	if err := c.SetFault(ctx, "free", fakeprovider.Fault{Kind: "500", Percent: 130}); err == nil {
		t.Error("130 % was accepted")
	}
	got, err := c.Faults(ctx)
	if err != nil || got["free"] != (fakeprovider.Fault{Kind: fakeprovider.ErrorInOK, Percent: 30}) {
		t.Fatalf("faults = %v, %v", got, err)
	}
	count := func(route string) int {
		n := 0
		for range 20 {
			code, body := chat(t, srv.URL+"/"+route+"/v1")
			if code != http.StatusOK {
				t.Fatalf("%s: %d %s", route, code, body)
			}
			if strings.TrimSpace(body) == fakeprovider.ErrorInOKBody {
				n++
			} else if !strings.Contains(body, "Paris") {
				t.Fatalf("%s: neither a fault nor an answer: %s", route, body)
			}
		}
		return n
	}
	if n := count("free"); n != 6 {
		t.Errorf("free: %d error templates in 20 calls, want 6", n)
	}
	if n := count("paid"); n != 0 {
		t.Errorf("paid: %d error templates in 20 calls, want 0", n)
	}
	if err := c.Heal(ctx, "free"); err != nil {
		t.Fatal(err)
	}
	if n := count("free"); n != 0 {
		t.Errorf("free healed: %d error templates in 20 calls, want 0", n)
	}
	if p.Requests("/free/v1/chat/completions") != 40 {
		t.Errorf("requests of free = %d, want 40", p.Requests("/free/v1/chat/completions"))
	}
}

// TestStatusKinds checks the kinds that answer with an HTTP error.
func TestStatusKinds(t *testing.T) {
	p := fakeprovider.New()
	srv := httptest.NewServer(p.Handler())
	defer srv.Close()
	defer p.Close()
	for kind, want := range map[fakeprovider.Kind]int{
		fakeprovider.RateLimited: 429, fakeprovider.InternalError: 500, fakeprovider.Unavailable: 503,
		fakeprovider.ServerError: 503, fakeprovider.ContextLength: 400, fakeprovider.ContentFilter: 400,
	} {
		p.SetFault("r", fakeprovider.Fault{Kind: kind, Percent: 100})
		if code, body := chat(t, srv.URL+"/r/v1"); code != want {
			t.Errorf("%s: %d %s, want %d", kind, code, body, want)
		}
	}
}

// TestStreamedKinds checks what a streamed completion carries under the
// kinds that change a stream's end.
func TestStreamedKinds(t *testing.T) {
	p := fakeprovider.New()
	srv := httptest.NewServer(p.Handler())
	defer srv.Close()
	defer p.Close()
	stream := func() (string, error) {
		resp, err := http.Post(srv.URL+"/r/v1/chat/completions", "application/json",
			strings.NewReader(`{"model":"fake-model","stream":true,"messages":[{"role":"user","content":"Summarize this."}]}`))
		if err != nil {
			return "", err
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		return string(b), err
	}
	for _, tc := range []struct {
		kind       fakeprovider.Kind
		want, not  string
		brokenBody bool
	}{
		{fakeprovider.Healthy, "data: [DONE]", "", false},
		{fakeprovider.ErrorInOK, "data: " + fakeprovider.ErrorInOKBody, "[DONE]", false},
		{fakeprovider.NoDone, `"finish_reason":"stop"`, "[DONE]", false},
		{fakeprovider.Truncated, "cheap", "[DONE]", false},
		{fakeprovider.StreamCut, "cheap", "[DONE]", true},
		{fakeprovider.ErrorMidStream, `data: {"error":{`, "[DONE]", false},
	} {
		p.SetFault("r", fakeprovider.Fault{Kind: tc.kind, Percent: 100})
		body, err := stream()
		if (err != nil) != tc.brokenBody {
			t.Errorf("%s: reading the stream: %v, want a broken body %v", tc.kind, err, tc.brokenBody)
		}
		if !strings.Contains(body, tc.want) || tc.not != "" && strings.Contains(body, tc.not) {
			t.Errorf("%s: stream %q; want %q and no %q", tc.kind, body, tc.want, tc.not)
		}
	}
}

// TestErrorMidStreamJudged: the provider's error_mid_stream is judged
// error_body, plain and streamed, as internal/faults' fault of that name
// is: its first words reach the client before the failure.
func TestErrorMidStreamJudged(t *testing.T) {
	p := fakeprovider.New()
	srv := httptest.NewServer(p.Handler())
	defer srv.Close()
	defer p.Close()
	p.SetFault("r", fakeprovider.Fault{Kind: fakeprovider.ErrorMidStream, Percent: 100})
	v := validate.MustNew(validate.Rules{})
	for _, stream := range []bool{false, true} {
		resp, err := http.Post(srv.URL+"/r/v1/chat/completions", "application/json",
			strings.NewReader(fmt.Sprintf(`{"model":"fake-model","stream":%v,"messages":[{"role":"user","content":"Summarize this."}]}`, stream)))
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(body), "cheap") {
			t.Errorf("stream=%v: %s; want the answer's first words", stream, body)
		}
		if got := v.Classify(resp.StatusCode, resp.Header, body); got.Verdict != validate.SoftFail || got.Reason != validate.ReasonErrorBody {
			t.Errorf("stream=%v: judged %s/%s (%s), want soft_fail/error_body", stream, got.Verdict, got.Reason, got.Detail)
		}
	}
}

// TestCallerCap: a healthy completion ends at the caller's max_tokens or
// max_completion_tokens (the smaller when both are set) with
// finish_reason length and a usage of the cap, as a provider ends it.
func TestCallerCap(t *testing.T) {
	p := fakeprovider.New()
	srv := httptest.NewServer(p.Handler())
	defer srv.Close()
	defer p.Close()
	for _, tc := range []struct {
		caps   string
		words  int
		finish string
	}{
		{`"max_tokens":3`, 3, "length"},
		{`"max_completion_tokens":3`, 3, "length"},
		{`"max_tokens":5,"max_completion_tokens":3`, 3, "length"},
		{`"max_tokens":3,"max_completion_tokens":5`, 3, "length"},
		{`"max_completion_tokens":40`, 6, "stop"},
		{`"max_tokens":40,"max_completion_tokens":null`, 6, "stop"},
	} {
		body := `{"model":"fake-model","messages":[{"role":"user","content":"What is the capital of France?"}],` + tc.caps + `}`
		resp, err := http.Post(srv.URL+"/r/v1/chat/completions", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		var reply struct {
			Choices []struct {
				Message      struct{ Content string }
				FinishReason string `json:"finish_reason"`
			}
			Usage struct {
				CompletionTokens int `json:"completion_tokens"`
			}
		}
		err = json.NewDecoder(resp.Body).Decode(&reply)
		resp.Body.Close()
		if err != nil || len(reply.Choices) != 1 {
			t.Fatalf("%s: %d %+v %v", tc.caps, resp.StatusCode, reply, err)
		}
		c := reply.Choices[0]
		if n := len(strings.Fields(c.Message.Content)); n != tc.words || c.FinishReason != tc.finish || reply.Usage.CompletionTokens != tc.words {
			t.Errorf("%s: %d words %q, finish %s, usage %d; want %d words, finish %s", tc.caps, n, c.Message.Content, c.FinishReason, reply.Usage.CompletionTokens, tc.words, tc.finish)
		}
	}
}
