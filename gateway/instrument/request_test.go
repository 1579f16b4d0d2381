package instrument_test

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/gateway/instrument"
	"github.com/hermes-failover/hermes/gateway/validate"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// roundTripFunc is a RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// TestTransportReadsTheCapOfABodySentAgain: a body the transport sends
// again from its start (GetBody, a retry on a new connection) is read
// for max_tokens from its start, and the caller's own request is left
// as it was.
func TestTransportReadsTheCapOfABodySentAgain(t *testing.T) {
	body := `{"model":"m","messages":[{"role":"user","content":"Name a colour, in one word, please."}],"max_tokens":3}`
	reply := `{"choices":[{"index":0,"message":{"role":"assistant","content":"Blue, or red"},"finish_reason":"length"}],"usage":{"prompt_tokens":9,"completion_tokens":3,"total_tokens":12}}`
	next := roundTripFunc(func(r *http.Request) (*http.Response, error) {
		// The first connection fails a few bytes in, inside a string.
		if _, err := io.ReadFull(r.Body, make([]byte, 50)); err != nil {
			t.Fatal(err)
		}
		again, err := r.GetBody()
		if err != nil {
			t.Fatal(err)
		}
		if b, _ := io.ReadAll(again); string(b) != body {
			t.Errorf("sent again: %q", b)
		}
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
			Body: io.NopCloser(strings.NewReader(reply)), Request: r}, nil
	})
	reg := prometheus.NewRegistry()
	m := instrument.MustNewMetrics(reg)
	client := &http.Client{Transport: m.Transport("free", validate.MustNew(validate.Rules{}), next)}
	req, err := http.NewRequest(http.MethodPost, "http://upstream.invalid/v1/chat/completions", bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	orig := req.Body
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if req.Body != orig {
		t.Error("the caller's request was changed")
	}
	labels := map[string]string{"route": "free", "code": "200", "verdict": "ok", "reason": ""}
	if got := testenv.Metric(t, reg, "llm_gateway_requests_total", labels); got != 1 {
		t.Errorf("llm_gateway_requests_total%v = %v, want 1 (the caller's max_tokens ended the reply)", labels, got)
	}
}
