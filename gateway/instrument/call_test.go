package instrument_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/gateway/instrument"
	"github.com/hermes-failover/hermes/gateway/validate"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// TestCallRecordsWithoutNetHTTP drives the recording core the way a front
// that is not net/http's would: a stream fed in pieces, a plain reply cut
// off, a reply its reader left early, a call that got no reply. Each is
// recorded as Middleware and Transport record it.
func TestCallRecordsWithoutNetHTTP(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := instrument.MustNewMetrics(reg)
	v := validate.MustNew(validate.Rules{})
	sse := http.Header{"Content-Type": {"text/event-stream"}}
	plain := http.Header{"Content-Type": {"application/json"}}
	event := `data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{"content":"Routes fail silently. "},"finish_reason":null}]}` + "\n\n"
	last := `data: {"id":"c","object":"chat.completion.chunk","model":"m","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}` + "\n\ndata: [DONE]\n\n"
	half := `{"id":"c","object":"chat.completion","model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"Routes`

	c := m.Begin("free", v)
	c.Reply(http.StatusOK, sse)
	for _, p := range []string{event[:10], event[10:], event, last} {
		c.Write([]byte(p))
	}
	if res := c.Finish(false); res.Verdict != validate.OK || !res.Stream {
		t.Errorf("stream: %+v, want ok", res)
	}

	c = m.Begin("free", v)
	c.Reply(http.StatusOK, plain)
	c.Write([]byte(half))
	c.Interrupted()
	if res := c.Finish(false); res.Verdict != validate.SoftFail || res.Reason != validate.ReasonTruncated {
		t.Errorf("cut reply: %+v, want soft_fail truncated", res)
	}

	c = m.Begin("free", v)
	c.Reply(http.StatusOK, plain)
	c.Write([]byte(half))
	if res := c.Finish(true); res.Verdict != validate.OK {
		t.Errorf("reply left early: %+v, want ok (the upstream is not charged)", res)
	}

	m.Begin("free", v).Fail(instrument.CodeTimeout)

	for _, s := range []struct {
		labels map[string]string
		want   float64
	}{
		{map[string]string{"route": "free", "code": "200", "verdict": "ok", "reason": ""}, 2},
		{map[string]string{"route": "free", "code": "200", "verdict": "soft_fail", "reason": "truncated"}, 1},
		{map[string]string{"route": "free", "code": "timeout", "verdict": "hard_fail", "reason": ""}, 1},
	} {
		if got := testenv.Metric(t, reg, "llm_gateway_requests_total", s.labels); got != s.want {
			t.Errorf("llm_gateway_requests_total%v = %v, want %v", s.labels, got, s.want)
		}
	}
	if got := testenv.Metric(t, reg, "llm_gateway_time_to_first_token_seconds", map[string]string{"route": "free"}); got != 1 {
		t.Errorf("time to first token count %v, want 1 (the stream)", got)
	}
	if got := testenv.Metric(t, reg, "llm_gateway_response_size_bytes", map[string]string{"route": "free"}); got != 3 {
		t.Errorf("response sizes observed %v, want 3 (not the timeout)", got)
	}
}

// TestCallDiscardContent: a call told that nobody reads the Result's
// Content, before or after its reply began, gives the verdict a call
// that keeps it gives, and no Content.
func TestCallDiscardContent(t *testing.T) {
	m := instrument.MustNewMetrics(prometheus.NewRegistry())
	v := validate.MustNew(validate.Rules{MinLength: 300})
	plain := http.Header{"Content-Type": {"application/json"}}
	body := []byte(`{"choices":[{"index":0,"message":{"role":"assistant","content":"` + strings.Repeat(`Routes fail silently.\n`, 10) + `"},"finish_reason":"stop"}]}`)
	judge := func(discard, before bool) validate.Result {
		c := m.Begin("free", v)
		if discard && before {
			c.DiscardContent()
		}
		c.Reply(http.StatusOK, plain)
		if discard && !before {
			c.DiscardContent()
		}
		c.Write(body)
		return c.Finish(false)
	}
	want := judge(false, false)
	if want.Verdict != validate.SoftFail || want.Reason != validate.ReasonTooShort || want.Content == "" {
		t.Fatalf("kept: %+v, want too_short with its content", want)
	}
	want.Content = ""
	for _, before := range []bool{true, false} {
		if got := judge(true, before); got != want {
			t.Errorf("discarded (before the reply: %v): %+v, want %+v", before, got, want)
		}
	}
}
