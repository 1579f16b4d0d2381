package instrument_test

import (
	"github.com/hermes-failover/hermes/internal/testenv"

	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/gateway/instrument"
	"github.com/hermes-failover/hermes/gateway/validate"
	"github.com/hermes-failover/hermes/internal/fakeopenai"
)

func chatRequest(t *testing.T, base string, stream bool) *http.Request {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"model":    fakeopenai.Model,
		"messages": []any{map[string]any{"role": "user", "content": "Summarise: routes fail silently."}},
		"stream":   stream,
	})
	req, err := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	return req
}

// TestTransportVerdicts sends a plain and a streamed request through the
// instrumented transport to a real fake-API server in every mode and
// asserts the recorded series.
func TestTransportVerdicts(t *testing.T) {
	srv := fakeopenai.Start(t)
	srv.SetDelay(2 * time.Second)
	v := validate.MustNew(validate.Rules{MinLength: 10})
	tests := []struct {
		mode    fakeopenai.Mode
		code    string
		verdict validate.Verdict
		reason  validate.Reason
	}{
		{fakeopenai.Healthy, "200", validate.OK, ""},
		{fakeopenai.Truncated, "200", validate.SoftFail, validate.ReasonTruncated},
		{fakeopenai.ErrorTemplate, "200", validate.SoftFail, validate.ReasonErrorBody},
		{fakeopenai.Fallback, "200", validate.SoftFail, validate.ReasonFallbackPhrase},
		{fakeopenai.Empty, "200", validate.SoftFail, validate.ReasonEmpty},
		{fakeopenai.TooShort, "200", validate.SoftFail, validate.ReasonTooShort},
		{fakeopenai.InvalidJSON, "200", validate.SoftFail, validate.ReasonInvalidJSON},
		{fakeopenai.ServerError, "503", validate.HardFail, ""},
		{fakeopenai.Slow, instrument.CodeTimeout, validate.HardFail, ""},
		{fakeopenai.Drop, instrument.CodeConnError, validate.HardFail, ""},
	}
	for _, tt := range tests {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", tt.mode, stream), func(t *testing.T) {
				reg := prometheus.NewRegistry()
				m := instrument.MustNewMetrics(reg)
				client := &http.Client{Transport: m.Transport("free", v, &http.Transport{DisableKeepAlives: true}), Timeout: 500 * time.Millisecond}
				srv.SetMode(tt.mode)
				resp, err := client.Do(chatRequest(t, srv.URL, stream))
				var n int64
				if err == nil {
					n, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
				want := map[string]string{"route": "free", "code": tt.code, "verdict": string(tt.verdict), "reason": string(tt.reason)}
				if got := testenv.Metric(t, reg, "llm_gateway_requests_total", want); got != 1 {
					mfs, _ := reg.Gather()
					t.Fatalf("llm_gateway_requests_total%v = %v (err %v); have %v", want, got, err, mfs)
				}
				if got := testenv.Metric(t, reg, "llm_gateway_request_duration_seconds", map[string]string{"route": "free"}); got != 1 {
					t.Errorf("duration histogram count %v, want 1", got)
				}
				wantSize := 1.0
				if tt.code == instrument.CodeTimeout || tt.code == instrument.CodeConnError {
					wantSize = -1
				}
				if got := testenv.Metric(t, reg, "llm_gateway_response_size_bytes", map[string]string{"route": "free"}); got != wantSize {
					t.Errorf("size histogram count %v, want %v", got, wantSize)
				}
				if wantSize == 1 {
					if sum := sizeSum(t, reg); sum != float64(n) {
						t.Errorf("size sum %v, read %d bytes", sum, n)
					}
				}
			})
		}
	}
}

func sizeSum(t *testing.T, reg *prometheus.Registry) float64 {
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		if mf.GetName() == "llm_gateway_response_size_bytes" {
			return mf.GetMetric()[0].GetHistogram().GetSampleSum()
		}
	}
	return -1
}

// TestTransportStreamsThrough reads the first event of a stream through
// the instrumented transport while the server holds the rest: nothing is
// buffered, and nothing is recorded before the end.
func TestTransportStreamsThrough(t *testing.T) {
	srv := fakeopenai.Start(t)
	reg := prometheus.NewRegistry()
	m := instrument.MustNewMetrics(reg)
	client := &http.Client{Transport: m.Transport("free", validate.MustNew(validate.Rules{}), nil)}
	srv.Hold()
	resp, err := client.Do(chatRequest(t, srv.URL, true))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	r := bufio.NewReader(resp.Body)
	line, err := r.ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "data: ") {
		t.Fatalf("first line %q, %v", line, err)
	}
	if got := testenv.Metric(t, reg, "llm_gateway_requests_total", map[string]string{"route": "free", "code": "200", "verdict": "ok", "reason": ""}); got != -1 {
		t.Fatalf("recorded before the end of the stream: %v", got)
	}
	srv.Release()
	if _, err := io.Copy(io.Discard, r); err != nil {
		t.Fatal(err)
	}
	if got := testenv.Metric(t, reg, "llm_gateway_requests_total", map[string]string{"route": "free", "code": "200", "verdict": "ok", "reason": ""}); got != 1 {
		t.Fatalf("after the stream: %v", got)
	}
}

// TestTransportEarlyClose: a caller that stops reading a stream is not
// charged to the upstream as a truncation.
func TestTransportEarlyClose(t *testing.T) {
	srv := fakeopenai.Start(t)
	reg := prometheus.NewRegistry()
	m := instrument.MustNewMetrics(reg)
	client := &http.Client{Transport: m.Transport("free", validate.MustNew(validate.Rules{}), nil)}
	resp, err := client.Do(chatRequest(t, srv.URL, true))
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10)
	io.ReadFull(resp.Body, buf)
	resp.Body.Close()
	if got := testenv.Metric(t, reg, "llm_gateway_requests_total", map[string]string{"route": "free", "code": "200", "verdict": "ok", "reason": ""}); got != 1 {
		t.Fatalf("early close: %v", got)
	}
}

// TestTransportSkipsProbesAndCancels: probe traffic and cancelled calls
// are not recorded; WithRoute overrides the route.
func TestTransportSkipsProbesAndCancels(t *testing.T) {
	srv := fakeopenai.Start(t)
	reg := prometheus.NewRegistry()
	m := instrument.MustNewMetrics(reg)
	client := &http.Client{Transport: m.Transport("free", validate.MustNew(validate.Rules{}), nil)}
	req := chatRequest(t, srv.URL, false)
	req.Header.Set(instrument.ProbeHeader, "1")
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()

	srv.SetMode(fakeopenai.Slow)
	ctx, cancel := context.WithCancel(context.Background())
	req = chatRequest(t, srv.URL, false).WithContext(ctx)
	time.AfterFunc(100*time.Millisecond, cancel)
	if _, err := client.Do(req); err == nil {
		t.Fatal("cancelled request succeeded")
	}
	if mfs := recordedCalls(t, reg); len(mfs) != 0 {
		t.Fatalf("recorded %v", mfs)
	}

	srv.SetMode(fakeopenai.Healthy)
	req = chatRequest(t, srv.URL, false)
	req = req.WithContext(instrument.WithRoute(req.Context(), "paid-standard"))
	resp, err = client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if got := testenv.Metric(t, reg, "llm_gateway_requests_total", map[string]string{"route": "paid-standard", "code": "200", "verdict": "ok", "reason": ""}); got != 1 {
		t.Fatalf("WithRoute: %v", got)
	}
}

// TestMiddleware puts the middleware around a reverse proxy to the fake
// API, served on a real port, and checks the series for a healthy stream,
// a fallback phrase and a 5xx.
func TestMiddleware(t *testing.T) {
	srv := fakeopenai.Start(t)
	up, _ := url.Parse(srv.URL)
	reg := prometheus.NewRegistry()
	m := instrument.MustNewMetrics(reg)
	proxy := httputil.NewSingleHostReverseProxy(up)
	proxy.FlushInterval = -1
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gw := &http.Server{Handler: m.Middleware("free", validate.MustNew(validate.Rules{}), proxy), ReadHeaderTimeout: 5 * time.Second}
	go gw.Serve(l)
	t.Cleanup(func() { gw.Close() })
	base := "http://" + l.Addr().String()

	for _, tt := range []struct {
		mode            fakeopenai.Mode
		stream          bool
		code, v, reason string
	}{
		{fakeopenai.Healthy, true, "200", "ok", ""},
		{fakeopenai.Fallback, false, "200", "soft_fail", "fallback_phrase"},
		{fakeopenai.Truncated, true, "200", "soft_fail", "truncated"},
		{fakeopenai.ServerError, false, "503", "hard_fail", ""},
	} {
		srv.SetMode(tt.mode)
		resp, err := http.DefaultClient.Do(chatRequest(t, base, tt.stream))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		// The middleware records once the handler has returned, which may
		// be just after the client has the whole reply.
		want := map[string]string{"route": "free", "code": tt.code, "verdict": tt.v, "reason": tt.reason}
		deadline := time.Now().Add(5 * time.Second)
		for testenv.Metric(t, reg, "llm_gateway_requests_total", want) != 1 && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if got := testenv.Metric(t, reg, "llm_gateway_requests_total", want); got != 1 {
			t.Errorf("%s: llm_gateway_requests_total%v = %v", tt.mode, want, got)
		}
	}
	if got := testenv.Metric(t, reg, "llm_gateway_request_duration_seconds", map[string]string{"route": "free"}); got != 4 {
		t.Errorf("duration count %v, want 4", got)
	}
}

// TestTimeToFirstToken: a streamed reply records its time to first token,
// through the Transport and through the Middleware; a plain one does not.
func TestTimeToFirstToken(t *testing.T) {
	srv := fakeopenai.Start(t)
	v := validate.MustNew(validate.Rules{})
	up, _ := url.Parse(srv.URL)
	proxy := httputil.NewSingleHostReverseProxy(up)
	proxy.FlushInterval = -1
	for _, path := range []string{"transport", "middleware"} {
		t.Run(path, func(t *testing.T) {
			reg := prometheus.NewRegistry()
			m := instrument.MustNewMetrics(reg)
			client, base := http.DefaultClient, srv.URL
			if path == "transport" {
				client = &http.Client{Transport: m.Transport("free", v, nil)}
			} else {
				base = serve(t, m.Middleware("free", v, proxy))
			}
			ttft := map[string]string{"route": "free"}
			for _, stream := range []bool{false, true} {
				resp, err := client.Do(chatRequest(t, base, stream))
				if err != nil {
					t.Fatal(err)
				}
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
			}
			waitMetric(t, reg, "llm_gateway_request_duration_seconds", ttft, 2)
			if got := testenv.Metric(t, reg, "llm_gateway_time_to_first_token_seconds", ttft); got != 1 {
				t.Errorf("time to first token count %v, want 1 (the stream only)", got)
			}
		})
	}
}

// serve serves h on a real port of 127.0.0.1 until the test ends and
// returns its base URL.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gw := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go gw.Serve(l)
	t.Cleanup(func() { gw.Close() })
	return "http://" + l.Addr().String()
}

// waitMetric waits until the series has the value: the middleware records
// once the handler has returned, which may be just after the client has
// the whole reply.
func waitMetric(t *testing.T, reg *prometheus.Registry, name string, labels map[string]string, want float64) {
	t.Helper()
	testenv.EventuallyDetail(t, 30*time.Second, fmt.Sprintf("%s%v = %v", name, labels, want), func() (bool, string) {
		got := testenv.Metric(t, reg, name, labels)
		return got == want, fmt.Sprint(got)
	})
}
