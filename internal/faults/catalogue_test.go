package faults_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"

	"github.com/hermes-failover/hermes/gateway/instrument"
	"github.com/hermes-failover/hermes/gateway/validate"
	"github.com/hermes-failover/hermes/internal/faults"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/probe"
)

// outcome is what one path records for one reply.
type outcome struct{ code, verdict, reason string }

func (o outcome) String() string { return fmt.Sprintf("%s %s/%s", o.code, o.verdict, o.reason) }

var (
	ok        = outcome{"200", "ok", ""}
	truncated = outcome{"200", "soft_fail", "truncated"}
)

func hard(code string) outcome { return outcome{code, "hard_fail", ""} }

// expected is the outcome of a fault on the transport and the prober; the
// middleware, whose reverse proxy reports a call without a reply with
// instrument.UpstreamError and gives the upstream call a timeout of its
// own, records the same.
func expected(f faults.Fault) (transport, middleware outcome) {
	transport = map[faults.Fault]outcome{
		faults.Healthy:            ok,
		faults.SlowFirstToken:     ok,
		faults.NoDone:             ok,
		faults.RateLimitedRetry:   hard("429"),
		faults.RateLimited:        hard("429"),
		faults.InternalError:      hard("500"),
		faults.Unavailable:        hard("503"),
		faults.ResetBeforeHeaders: hard(instrument.CodeConnError),
		faults.NoResponse:         hard(instrument.CodeTimeout),
		faults.StreamCut:          truncated,
		faults.Stall:              truncated,
		faults.MalformedChunk:     {"200", "soft_fail", "invalid_json"},
		faults.ContextLength:      {"400", "rejected", "context_length"},
		faults.ContentFilter:      {"400", "rejected", "content_policy"},
		faults.ErrorInOK:          {"200", "soft_fail", "error_body"},
		faults.ErrorAsStream:      {"200", "soft_fail", "error_body"},
		faults.MaxTokensCapped:    truncated, // 4 tokens, short of the max_tokens 40 asked
		faults.ErrorMidStream:     {"200", "soft_fail", "error_body"},
	}[f]
	if transport == (outcome{}) {
		panic("no expectation for " + f)
	}
	return transport, transport
}

// throughInstrument runs every fault of the catalogue, plain and
// streamed, through the instrumented Transport and the Middleware around
// a reverse proxy, each call sent with send, and asserts that each
// records want(fault).
func throughInstrument(t *testing.T, srv *faults.Server, v *validate.Validator, send func(t *testing.T, client *http.Client, base string, stream bool), want func(faults.Fault) outcome) {
	t.Run("transport", func(t *testing.T) {
		t.Parallel()
		eachCase(t, func(t *testing.T, f faults.Fault, stream bool) {
			reg := prometheus.NewRegistry()
			m := instrument.MustNewMetrics(reg)
			client := &http.Client{Transport: m.Transport("r", v, &http.Transport{DisableKeepAlives: true}), Timeout: clientTimeout}
			send(t, client, srv.BaseURL(f), stream)
			assertRecorded(t, reg, want(f))
			assertTTFT(t, reg, f, stream, srv.FirstTokenDelay)
		})
	})
	t.Run("middleware", func(t *testing.T) {
		t.Parallel()
		up, _ := url.Parse(srv.URL)
		eachCase(t, func(t *testing.T, f faults.Fault, stream bool) {
			reg := prometheus.NewRegistry()
			gw := middlewareGateway(t, reg, up, v)
			// The client outwaits the gateway's upstream timeout: a caller
			// that hangs up is not recorded.
			client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}, Timeout: 5 * clientTimeout}
			send(t, client, gw+"/"+string(f)+"/v1", stream)
			// The middleware records once the handler has returned, which
			// may be after the client has the reply or gave up.
			waitRecorded(t, reg)
			assertRecorded(t, reg, want(f))
			assertTTFT(t, reg, f, stream, srv.FirstTokenDelay)
		})
	})
}

// callerCapRecords sends, with send, calls capped at the caller's own
// tokens to the healthy and the capping fault through the instrumented
// Transport judging with v: one the caller's cap ended is ok, one the
// route ended short of it truncated.
func callerCapRecords(t *testing.T, srv *faults.Server, v *validate.Validator, send func(client *http.Client, base string, stream bool, n int)) {
	t.Helper()
	for _, tc := range []struct {
		f    faults.Fault
		n    int
		want outcome
	}{
		{faults.Healthy, 3, ok},
		{faults.MaxTokensCapped, 3, ok}, // the caller's cap comes first
		{faults.MaxTokensCapped, 8, truncated},
	} {
		for _, stream := range []bool{false, true} {
			reg := prometheus.NewRegistry()
			m := instrument.MustNewMetrics(reg)
			client := &http.Client{Transport: m.Transport("r", v, &http.Transport{DisableKeepAlives: true}), Timeout: clientTimeout}
			send(client, srv.BaseURL(tc.f), stream, tc.n)
			if labels := (map[string]string{"route": "r", "code": tc.want.code, "verdict": tc.want.verdict, "reason": tc.want.reason}); testenv.Metric(t, reg, "llm_gateway_requests_total", labels) != 1 {
				t.Errorf("%s cap=%d stream=%v: want %s; have %s", tc.f, tc.n, stream, tc.want, dump(t, reg, "llm_gateway_requests_total"))
			}
		}
	}
}

// middlewareGateway serves instrument's Middleware, recording on reg and
// judging with v, around a reverse proxy to up whose ErrorHandler reports
// a call without a reply, as docs/gateway.md says to.
func middlewareGateway(t *testing.T, reg *prometheus.Registry, up *url.URL, v *validate.Validator) string {
	t.Helper()
	m := instrument.MustNewMetrics(reg)
	proxy := httputil.NewSingleHostReverseProxy(up)
	proxy.FlushInterval = -1
	proxy.Transport = &http.Transport{DisableKeepAlives: true}
	proxy.ErrorLog = slog.NewLogLogger(slog.DiscardHandler, slog.LevelError)
	proxy.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		if instrument.UpstreamError(r, err) != "" {
			w.WriteHeader(http.StatusBadGateway)
		}
	}
	return serve(t, m.Middleware("r", v, upstreamTimeout(clientTimeout, proxy)))
}

// clientTimeout is how long a client waits for a fault that never ends.
const clientTimeout = time.Second

// upstreamTimeout gives the upstream call of next a timeout of its own, as
// a gateway's upstream timeout does (hermes proxy's limits).
func upstreamTimeout(d time.Duration, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), d)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// TestCatalogue runs every fault of the catalogue, plain and streamed,
// through the instrumented Transport, the Middleware around a reverse
// proxy and the prober, and asserts what each records.
func TestCatalogue(t *testing.T) {
	srv := faults.Start(t)
	v := validate.MustNew(validate.Rules{MinLength: 5})
	throughInstrument(t, srv, v, call, func(f faults.Fault) outcome { want, _ := expected(f); return want })
	t.Run("prober", func(t *testing.T) {
		t.Parallel()
		proberRecords(t, srv, "", func(f faults.Fault) outcome { want, _ := expected(f); return want })
	})
}

// proberRecords runs the prober's e2e layer, a plain and a streamed
// prompt, against every fault of the catalogue in the API api ("" for
// chat completions), and asserts that each records wantOf(fault).
func proberRecords(t *testing.T, srv *faults.Server, api string, wantOf func(faults.Fault) outcome) {
	var targets strings.Builder
	for _, f := range faults.Catalogue {
		fmt.Fprintf(&targets, "  - {route: %q, base_url: %q, model: %s, api: %q}\n", f, srv.BaseURL(f), faults.Model, api)
	}
	reg, p := newProber(t, targets.String(), 40, 40)
	var wg sync.WaitGroup
	for _, f := range faults.Catalogue {
		wg.Go(func() { p.RunLayer(context.Background(), string(f), probe.E2E) })
	}
	wg.Wait()
	for _, f := range faults.Catalogue {
		for _, stream := range []bool{false, true} {
			name := map[bool]string{false: "plain", true: "streamed"}[stream]
			want := wantOf(f)
			labels := map[string]string{"route": string(f), "probe": name, "verdict": want.verdict, "reason": want.reason}
			if got := testenv.Metric(t, reg, "llm_probe_verdict_total", labels); got != 1 {
				t.Errorf("%s/%s: llm_probe_verdict_total%v = %v; have %s", f, name, labels, got, dump(t, reg, "llm_probe_verdict_total"))
			}
			// llm_probe_results_total: a rejection is a hard failure of
			// the probe; a hard failure's reason is its code's class.
			results := map[string]string{"route": string(f), "layer": "e2e", "probe": name, "verdict": want.verdict, "reason": want.reason}
			switch {
			case want.verdict == "rejected":
				results["verdict"], results["reason"] = "hard_fail", "rejected"
			case want.verdict == "hard_fail":
				results["reason"] = map[string]string{"429": "http_429", "500": "http_5xx", "503": "http_5xx", "529": "http_5xx",
					instrument.CodeConnError: "conn_error", instrument.CodeTimeout: "timeout"}[want.code]
			}
			if got := testenv.Metric(t, reg, "llm_probe_results_total", results); got != 1 {
				t.Errorf("%s/%s: llm_probe_results_total%v = %v; have %s", f, name, results, got, dump(t, reg, "llm_probe_results_total"))
			}
			wantOK := 0.0
			if want.verdict == "ok" {
				wantOK = 1
			}
			if got := testenv.Metric(t, reg, "llm_probe_success", map[string]string{"route": string(f), "probe": name, "layer": "e2e"}); got != wantOK {
				t.Errorf("%s/%s: llm_probe_success = %v, want %v", f, name, got, wantOK)
			}
		}
		ttft := testenv.Metric(t, reg, "llm_probe_time_to_first_token_seconds", map[string]string{"route": string(f), "probe": "streamed"})
		if f == faults.SlowFirstToken && ttft < srv.FirstTokenDelay.Seconds() {
			t.Errorf("%s: time to first token %v, want at least %s", f, ttft, srv.FirstTokenDelay)
		}
	}
}

// expectedMessages is the outcome of a fault through the Messages API
// (the fault server's /v1/messages, judged with format
// anthropic_messages): a chat completion's, but where the API has a
// fault of its own shape (internal/faults, messages.go).
func expectedMessages(f faults.Fault) outcome {
	switch f {
	case faults.Unavailable:
		return hard("529") // overloaded_error
	case faults.ContentFilter:
		return ok // a refusal, the model's answer
	}
	want, _ := expected(f)
	return want
}

// TestCatalogueMessages runs every fault of the catalogue, plain and
// streamed, through the Messages API on the instrumented Transport, the
// Middleware around a reverse proxy and the prober (api:
// anthropic_messages).
func TestCatalogueMessages(t *testing.T) {
	srv := faults.Start(t)
	v := validate.MustNew(validate.Rules{Format: validate.FormatAnthropicMessages, MinLength: 5})
	throughInstrument(t, srv, v, func(t *testing.T, client *http.Client, base string, stream bool) {
		callMessages(t, client, base, stream, 40)
	}, expectedMessages)
	t.Run("prober", func(t *testing.T) {
		t.Parallel()
		proberRecords(t, srv, string(validate.FormatAnthropicMessages), expectedMessages)
	})
	t.Run("caller's max_tokens", func(t *testing.T) {
		callerCapRecords(t, srv, v, func(client *http.Client, base string, stream bool, n int) { callMessages(t, client, base, stream, n) })
	})
}

// TestCatalogueResponses runs every fault of the catalogue, plain and
// streamed, through OpenAI's Responses API on the instrumented Transport,
// the Middleware around a reverse proxy and the prober (api:
// openai_responses): each records what the chat completion of that fault
// records.
func TestCatalogueResponses(t *testing.T) {
	srv := faults.Start(t)
	v := validate.MustNew(validate.Rules{Format: validate.FormatOpenAIResponses, MinLength: 5})
	throughInstrument(t, srv, v, func(t *testing.T, client *http.Client, base string, stream bool) {
		callResponses(t, client, base, stream, 40)
	}, func(f faults.Fault) outcome { want, _ := expected(f); return want })
	t.Run("prober", func(t *testing.T) {
		t.Parallel()
		proberRecords(t, srv, string(validate.FormatOpenAIResponses), func(f faults.Fault) outcome { want, _ := expected(f); return want })
	})
	t.Run("caller's max_output_tokens", func(t *testing.T) {
		callerCapRecords(t, srv, v, func(client *http.Client, base string, stream bool, n int) { callResponses(t, client, base, stream, n) })
	})
}

// TestCallerMaxTokens: a completion that the caller's own max_tokens (or
// max_completion_tokens) ended, with finish_reason length, is whole as
// far as the route goes, through the Transport, the Middleware and the
// prober alike; one a provider ended short of what was asked is
// truncated.
func TestCallerMaxTokens(t *testing.T) {
	srv := faults.Start(t)
	v := validate.MustNew(validate.Rules{MinLength: 5})
	up, _ := url.Parse(srv.URL)
	for _, tc := range []struct {
		f    faults.Fault
		key  string
		n    int
		want outcome
	}{
		{faults.Healthy, "max_tokens", 3, ok},
		{faults.Healthy, "max_completion_tokens", 3, ok},
		{faults.MaxTokensCapped, "max_tokens", 3, ok}, // the caller's cap comes first
		{faults.MaxTokensCapped, "max_tokens", 8, truncated},
		{faults.MaxTokensCapped, "max_completion_tokens", 8, truncated},
	} {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/%s=%d/stream=%v", tc.f, tc.key, tc.n, stream), func(t *testing.T) {
				reg := prometheus.NewRegistry()
				m := instrument.MustNewMetrics(reg)
				client := &http.Client{Transport: m.Transport("r", v, &http.Transport{DisableKeepAlives: true}), Timeout: clientTimeout}
				callCapped(t, client, srv.BaseURL(tc.f), stream, tc.key, tc.n)
				assertRecorded(t, reg, tc.want)

				reg = prometheus.NewRegistry()
				m = instrument.MustNewMetrics(reg)
				proxy := httputil.NewSingleHostReverseProxy(up)
				proxy.FlushInterval = -1
				gw := serve(t, m.Middleware("r", v, proxy))
				callCapped(t, &http.Client{Timeout: clientTimeout}, gw+"/"+string(tc.f)+"/v1", stream, tc.key, tc.n)
				waitRecorded(t, reg)
				assertRecorded(t, reg, tc.want)
			})
		}
	}
	t.Run("prober", func(t *testing.T) {
		reg, p := newProber(t, fmt.Sprintf("  - {route: healthy, base_url: %q, model: %s}\n  - {route: capped, base_url: %q, model: %s}\n",
			srv.BaseURL(faults.Healthy), faults.Model, srv.BaseURL(faults.MaxTokensCapped), faults.Model), 3, 8)
		p.RunLayer(context.Background(), "healthy", probe.E2E)
		p.RunLayer(context.Background(), "capped", probe.E2E)
		for _, c := range []struct {
			route, probe string
			want         outcome
		}{
			{"healthy", "plain", ok},    // ended at its own 3 tokens
			{"healthy", "streamed", ok}, // ended at its own 8 tokens
			{"capped", "plain", ok},     // its own 3 tokens came first
			{"capped", "streamed", truncated},
		} {
			labels := map[string]string{"route": c.route, "probe": c.probe, "verdict": c.want.verdict, "reason": c.want.reason}
			if got := testenv.Metric(t, reg, "llm_probe_verdict_total", labels); got != 1 {
				t.Errorf("llm_probe_verdict_total%v = %v; have %s", labels, got, dump(t, reg, "llm_probe_verdict_total"))
			}
		}
	})
}

// newProber is a prober of the targets (lines of YAML) with two e2e
// prompts, plain and streamed, asking for at most plainMax and
// streamedMax tokens.
func newProber(t *testing.T, targets string, plainMax, streamedMax int) (*prometheus.Registry, *probe.Prober) {
	t.Helper()
	cfg, err := probe.Parse([]byte(fmt.Sprintf(`defaults:
  e2e: {interval: 1m, timeout: %s, failure_threshold: 1}
targets:
%sprompts:
  - {name: plain, messages: [{role: user, content: "Say hello."}], max_tokens: %d, validation: {min_length: 5}}
  - {name: streamed, messages: [{role: user, content: "Say hello."}], max_tokens: %d, stream: true, validation: {min_length: 5}}
`, clientTimeout, targets, plainMax, streamedMax)), "probes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	reg := prometheus.NewRegistry()
	p, err := probe.New(cfg, reg, &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}, slog.New(slog.DiscardHandler))
	if err != nil {
		t.Fatal(err)
	}
	return reg, p
}

// eachCase runs test for every fault, plain and streamed, in parallel.
func eachCase(t *testing.T, test func(t *testing.T, f faults.Fault, stream bool)) {
	for _, f := range faults.Catalogue {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", f, stream), func(t *testing.T) {
				t.Parallel()
				test(t, f, stream)
			})
		}
	}
}

// call sends one chat request and reads the reply to its end (or to the
// client's timeout).
func call(t *testing.T, client *http.Client, base string, stream bool) {
	t.Helper()
	callCapped(t, client, base, stream, "max_tokens", 40)
}

// callCapped is call with the reply capped at n tokens by the request's
// member key (max_tokens or max_completion_tokens).
func callCapped(t *testing.T, client *http.Client, base string, stream bool, key string, n int) {
	t.Helper()
	post(t, client, base+"/chat/completions", map[string]any{
		"model": faults.Model, "stream": stream, key: n,
		"messages": []any{map[string]any{"role": "user", "content": "Say hello."}},
	})
}

// callMessages sends one call of the Messages API, capped at n tokens.
func callMessages(t *testing.T, client *http.Client, base string, stream bool, n int) {
	t.Helper()
	post(t, client, base+"/messages", map[string]any{
		"model": faults.Model, "stream": stream, "max_tokens": n,
		"messages": []any{map[string]any{"role": "user", "content": "Say hello."}},
	})
}

// callResponses sends one call of the Responses API, capped at n tokens.
func callResponses(t *testing.T, client *http.Client, base string, stream bool, n int) {
	t.Helper()
	post(t, client, base+"/responses", map[string]any{
		"model": faults.Model, "stream": stream, "max_output_tokens": n, "input": "Say hello.",
	})
}

// post sends a request body as JSON and reads the reply to its end (or
// to the client's timeout).
func post(t *testing.T, client *http.Client, url string, request map[string]any) {
	t.Helper()
	body, _ := json.Marshal(request)
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("anthropic-version", "2023-06-01") // read by the Messages API alone
	resp, err := client.Do(req)
	if err != nil {
		return // recorded as timeout or conn_error (transport), or by the proxy
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
}

func assertRecorded(t *testing.T, reg *prometheus.Registry, want outcome) {
	t.Helper()
	labels := map[string]string{"route": "r", "code": want.code, "verdict": want.verdict, "reason": want.reason}
	if got := testenv.Metric(t, reg, "llm_gateway_requests_total", labels); got != 1 {
		t.Errorf("llm_gateway_requests_total{%s} = %v; have %s", want, got, dump(t, reg, "llm_gateway_requests_total"))
	}
}

// waitRecorded waits until the request is recorded (its duration is).
func waitRecorded(t *testing.T, reg *prometheus.Registry) {
	t.Helper()
	labels := map[string]string{"route": "r"}
	testenv.Eventually(t, 30*time.Second, "the request recorded", func() bool {
		return testenv.Metric(t, reg, "llm_gateway_request_duration_seconds", labels) >= 1
	})
}

// assertTTFT wants a time to first token for the streams that delivered
// a token, at least the delay for SlowFirstToken, and none for the rest.
func assertTTFT(t *testing.T, reg *prometheus.Registry, f faults.Fault, stream bool, delay time.Duration) {
	t.Helper()
	delivered := stream && (f == faults.Healthy || f == faults.SlowFirstToken || f == faults.NoDone ||
		f == faults.StreamCut || f == faults.Stall || f == faults.MalformedChunk || f == faults.MaxTokensCapped ||
		f == faults.ErrorMidStream)
	count := testenv.Metric(t, reg, "llm_gateway_time_to_first_token_seconds", map[string]string{"route": "r"})
	switch {
	case delivered && count != 1:
		t.Errorf("time to first token count %v, want 1", count)
	case !delivered && count != -1:
		t.Errorf("time to first token count %v, want none", count)
	case f == faults.SlowFirstToken && stream:
		if sum := ttftSum(t, reg); sum < delay.Seconds() {
			t.Errorf("time to first token %vs, want at least %s", sum, delay)
		}
	}
}

func ttftSum(t *testing.T, reg *prometheus.Registry) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "llm_gateway_time_to_first_token_seconds" {
			return mf.GetMetric()[0].GetHistogram().GetSampleSum()
		}
	}
	return -1
}

// dump is a metric's family in the text exposition format, for failure
// messages.
func dump(t *testing.T, reg *prometheus.Registry, name string) string {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for _, mf := range mfs {
		if mf.GetName() == name {
			_, _ = expfmt.MetricFamilyToText(&b, mf)
		}
	}
	return b.String()
}

// serve serves h on a real port of 127.0.0.1 until the test ends.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gw := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second, ErrorLog: slog.NewLogLogger(slog.DiscardHandler, slog.LevelError)}
	go gw.Serve(l)
	t.Cleanup(func() { gw.Close() })
	return "http://" + l.Addr().String()
}
