package instrument_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

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

// recordedCalls is what reg holds of recorded calls: every family but the
// judge's panics, which is there at 0 from a route's first call.
func recordedCalls(t *testing.T, reg *prometheus.Registry) []*dto.MetricFamily {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	return slices.DeleteFunc(mfs, func(mf *dto.MetricFamily) bool { return mf.GetName() == "llm_gateway_judge_panics_total" })
}

// atZero fails unless route free's series of judge panics is there at 0
// before its first panic: a counter born at 1 is an increase no rule sees.
func atZero(t *testing.T, reg *prometheus.Registry) {
	t.Helper()
	if got := testenv.Metric(t, reg, "llm_gateway_judge_panics_total", map[string]string{"route": "free"}); got != 0 {
		t.Errorf("before any panic llm_gateway_judge_panics_total = %v, want 0 (-1: no series)", got)
	}
}

// TestJudgePanicIsContained: a judge that panics (here, no Validator at
// all) breaks neither the reply nor the process, through the Call, the
// Transport and the Middleware. The call is not recorded; the panic is
// counted.
func TestJudgePanicIsContained(t *testing.T) {
	const reply = `{"choices":[{"index":0,"message":{"role":"assistant","content":"Paris."},"finish_reason":"stop"}]}`
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, reply)
	}))
	defer upstream.Close()
	check := func(t *testing.T, reg *prometheus.Registry) {
		t.Helper()
		if got := testenv.Metric(t, reg, "llm_gateway_judge_panics_total", map[string]string{"route": "free"}); got != 1 {
			t.Errorf("llm_gateway_judge_panics_total = %v, want 1", got)
		}
		if got := testenv.Metric(t, reg, "llm_gateway_requests_total", map[string]string{"route": "free", "code": "200", "verdict": "ok", "reason": ""}); got != -1 {
			t.Errorf("llm_gateway_requests_total = %v, want no series: a call not judged is not recorded", got)
		}
	}
	post := func(t *testing.T, client *http.Client, url string) {
		t.Helper()
		resp, err := client.Post(url, "application/json", strings.NewReader(`{"max_tokens":5}`))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if b, err := io.ReadAll(resp.Body); err != nil || string(b) != reply {
			t.Errorf("the reply: %q, %v; want it whole", b, err)
		}
	}

	t.Run("call", func(t *testing.T) {
		reg := prometheus.NewRegistry()
		c := instrument.MustNewMetrics(reg).Begin("free", nil)
		atZero(t, reg)
		c.Request([]byte(`{"max_tokens":5}`))
		c.Reply(http.StatusOK, http.Header{"Content-Type": {"application/json"}})
		c.Write([]byte(reply))
		c.Interrupted()
		if res := c.Finish(false); res.Verdict != "" {
			t.Errorf("a call not judged has verdict %q", res.Verdict)
		}
		check(t, reg)
	})
	t.Run("transport", func(t *testing.T) {
		reg := prometheus.NewRegistry()
		client := &http.Client{Transport: instrument.MustNewMetrics(reg).Transport("free", nil, nil)}
		atZero(t, reg)
		post(t, client, upstream.URL)
		check(t, reg)
	})
	t.Run("middleware", func(t *testing.T) {
		reg := prometheus.NewRegistry()
		u, _ := url.Parse(upstream.URL)
		gw := httptest.NewServer(instrument.MustNewMetrics(reg).Middleware("free", nil, httputil.NewSingleHostReverseProxy(u)))
		defer gw.Close()
		atZero(t, reg)
		post(t, http.DefaultClient, gw.URL)
		testenv.EventuallyDetail(t, 5*time.Second, "the panic counted", func() (bool, string) {
			got := testenv.Metric(t, reg, "llm_gateway_judge_panics_total", map[string]string{"route": "free"})
			return got == 1, fmt.Sprint(got)
		})
		check(t, reg)
	})
}
