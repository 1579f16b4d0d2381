package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	commoncfg "github.com/prometheus/common/config"

	"github.com/hermes-failover/hermes/gateway/instrument"
	"github.com/hermes-failover/hermes/gateway/validate"
	"github.com/hermes-failover/hermes/internal/faults"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// testLimits make the faults that wait for the client give up in a second.
var testLimits = Limits{MaxConcurrentRequests: 64, FirstByteTimeout: time.Second, IdleTimeout: time.Second, TotalTimeout: 10 * time.Second, ClientBodyTimeout: 10 * time.Second}

// startProxy serves a Proxy of cfg on a real port of 127.0.0.1 until the
// test ends and returns its base URL and registry.
func startProxy(t *testing.T, cfg *Config, logger *slog.Logger) (string, *prometheus.Registry, *Proxy) {
	t.Helper()
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	reg := prometheus.NewRegistry()
	p, err := New(cfg, reg, logger)
	if err != nil {
		t.Fatal(err)
	}
	return serveFront(t, p), reg, p
}

// serveFront serves p as hermes proxy does, on its fasthttp Server, on a
// real port of 127.0.0.1 until the test ends; paths that are no route's
// are answered by NoRoute.
func serveFront(t *testing.T, p *Proxy) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := p.Server(http.HandlerFunc(NoRoute))
	go srv.Serve(l)
	t.Cleanup(func() {
		// The bound of a stream a failed test left open.
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		srv.ShutdownWithContext(ctx)
	})
	return "http://" + l.Addr().String()
}

// serve serves h on a real port of 127.0.0.1 until the test ends.
func serve(t *testing.T, h http.Handler) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return "http://" + l.Addr().String()
}

func testRoute(name, upstream string, rules validate.Rules) Route {
	return Route{Name: name, Upstream: upstream, Validation: rules, Limits: testLimits, HTTPConfig: commoncfg.DefaultHTTPClientConfig}
}

// chatRequest is a chat completion request to base (ending in /v1).
func chatRequest(t *testing.T, base string, stream bool) *http.Request {
	t.Helper()
	body, _ := json.Marshal(map[string]any{
		"model":    faults.Model,
		"messages": []any{map[string]any{"role": "user", "content": "Say hello."}},
		"stream":   stream,
	})
	req, err := http.NewRequest(http.MethodPost, base+"/chat/completions", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer sk-test-0123456789")
	return req
}

// reply is what a client got: status, headers (hop-by-hop and Date
// removed), the body it could read, and the error of the call or of the
// read.
type reply struct {
	status int
	header http.Header
	body   []byte
	err    error
}

func call(client *http.Client, req *http.Request) reply {
	resp, err := client.Do(req)
	if err != nil {
		return reply{err: err}
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	h := resp.Header.Clone()
	for _, k := range []string{"Date", "Connection", "Keep-Alive", "Transfer-Encoding"} {
		h.Del(k)
	}
	return reply{status: resp.StatusCode, header: h, body: body, err: err}
}

// requestsTotal is the requests_total series of a contract.
func requestsTotal(c map[string]float64) string {
	var out []string
	for k, v := range c {
		if strings.HasPrefix(k, "llm_gateway_requests_total") {
			out = append(out, fmt.Sprintf("%s %v", k, v))
		}
	}
	slices.Sort(out)
	return strings.Join(out, "\n")
}

// contract is the gateway metric contract as gathered from reg, in a form
// two recorders of the same calls agree on: every requests_total series,
// each histogram's count (and, for sizes, sum; durations differ) and
// the judge's panics once there is one.
func contract(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "llm_gateway_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			key := mf.GetName() + labels(m)
			switch {
			case m.Counter != nil && mf.GetName() == "llm_gateway_judge_panics_total" && m.GetCounter().GetValue() == 0:
				// There from the start: not a call recorded.
			case m.Counter != nil:
				out[key] = m.GetCounter().GetValue()
			case m.Histogram != nil:
				out[key+"_count"] = float64(m.GetHistogram().GetSampleCount())
				if mf.GetName() == "llm_gateway_response_size_bytes" {
					out[key+"_sum"] = m.GetHistogram().GetSampleSum()
				}
			}
		}
	}
	return out
}

func labels(m *dto.Metric) string {
	var s []string
	for _, l := range m.GetLabel() {
		s = append(s, l.GetName()+"="+l.GetValue())
	}
	slices.Sort(s)
	return "{" + strings.Join(s, ",") + "}"
}

// TestEveryFaultAsInstrumentRecordsIt sends each fault of the catalogue,
// plain and streamed, once straight through instrument's Transport and
// once through the proxy (on the lean exchange and on a route's
// RoundTripper), and compares: the same series, and the client
// gets the same status, headers and bytes. A call that got no reply is
// 504 (timeout) or 502 (conn_error) through the proxy, as from nginx.
func TestEveryFaultAsInstrumentRecordsIt(t *testing.T) {
	srv := faults.Start(t)
	rules := validate.Rules{}
	cases := slices.Clone(faults.Catalogue)
	cases = append(cases, faults.Oversized)
	// The same faults from a server that compresses its JSON replies as
	// a provider behind Cloudflare does, for a caller that asks (an
	// OpenAI SDK's httpx, or Go's transport when a gateway forwards
	// the caller's header): each fault in one of the codings, in turn.
	csrv := faults.Start(t)
	csrv.Compress = true
	codings := []string{"gzip", "br", "zstd"}
	for i, f := range cases {
		for _, c := range []struct {
			stream, lean bool
			coding       string
		}{{false, true, ""}, {true, true, ""}, {false, false, ""}, {true, false, ""}, {false, true, codings[i%3]}, {true, false, codings[i%3]}} {
			stream := c.stream
			t.Run(fmt.Sprintf("%s/stream=%v/lean=%v/coding=%s", f, stream, c.lean, c.coding), func(t *testing.T) {
				up := srv
				if c.coding != "" {
					up = csrv
				}
				if f == faults.Oversized {
					rules.MaxBodyBytes = 64 << 10
				}
				rt := testRoute("free", up.URL, rules)
				if !c.lean {
					// Through the route's RoundTripper: prometheus/common's,
					// for a header it adds.
					rt.HTTPConfig.HTTPHeaders = &commoncfg.Headers{Headers: map[string]commoncfg.Header{"X-Team": {Values: []string{"search"}}}}
				}
				base, preg, p := startProxy(t, &Config{Routes: []Route{rt}}, nil)
				if got := p.routes.Load().byName["free"].lean != nil; got != c.lean {
					t.Fatalf("the route takes the lean exchange: %v, want %v", got, c.lean)
				}
				dreg := prometheus.NewRegistry()
				m := instrument.MustNewMetrics(dreg)
				direct := &http.Client{Timeout: testLimits.IdleTimeout,
					Transport: m.Transport("free", validate.MustNew(rules), &http.Transport{DisableCompression: true})}

				dreq, preq := chatRequest(t, up.BaseURL(f), stream), chatRequest(t, base+"/free/"+string(f)+"/v1", stream)
				if c.coding != "" {
					// Set by the caller, so that Go's transport neither adds
					// nor undoes a coding: both get the upstream's bytes.
					dreq.Header.Set("Accept-Encoding", c.coding)
					preq.Header.Set("Accept-Encoding", c.coding)
				}
				want := call(direct, dreq)
				got := call(http.DefaultClient, preq)
				wantSeries := contract(t, dreg)
				if c.coding != "" {
					// Judged on what it decodes to: the verdicts of the
					// same fault sent uncoded.
					ureg := prometheus.NewRegistry()
					um := instrument.MustNewMetrics(ureg)
					plain := &http.Client{Timeout: testLimits.IdleTimeout,
						Transport: um.Transport("free", validate.MustNew(rules), &http.Transport{DisableCompression: true})}
					call(plain, chatRequest(t, srv.BaseURL(f), stream))
					if g, w := requestsTotal(contract(t, dreg)), requestsTotal(contract(t, ureg)); g != w {
						t.Errorf("coded %s judged %s; uncoded %s", c.coding, g, w)
					}
					if !stream && want.status == http.StatusOK && want.header.Get("Content-Encoding") != c.coding {
						t.Errorf("the upstream sent Content-Encoding %q, want %q", want.header.Get("Content-Encoding"), c.coding)
					}
				}
				testenv.EventuallyDetail(t, 10*time.Second, "the proxy's series are instrument's", func() (bool, string) {
					g := contract(t, preg)
					return fmt.Sprint(g) == fmt.Sprint(wantSeries), fmt.Sprintf("proxy %v\ndirect %v", g, wantSeries)
				})
				t.Logf("recorded %v", wantSeries)
				if len(wantSeries) == 0 {
					t.Fatal("nothing recorded")
				}
				if want.status == 0 {
					code := map[string]int{instrument.CodeTimeout: http.StatusGatewayTimeout, instrument.CodeConnError: http.StatusBadGateway}
					for k := range wantSeries {
						for c, status := range code {
							if strings.Contains(k, "code="+c) && got.status != status {
								t.Errorf("proxy answered %d (%v), want %d for %s", got.status, got.err, status, c)
							}
						}
					}
					return
				}
				if got.status != want.status || !bytes.Equal(got.body, want.body) {
					t.Errorf("proxy: %d %q (%v)\ndirect: %d %q (%v)", got.status, got.body, got.err, want.status, want.body, want.err)
				}
				if fmt.Sprint(got.header) != fmt.Sprint(want.header) {
					t.Errorf("headers through the proxy %v, direct %v", got.header, want.header)
				}
				if (got.err == nil) != (want.err == nil) {
					t.Errorf("read error through the proxy %v, direct %v", got.err, want.err)
				}
				if f == faults.Oversized && !strings.Contains(fmt.Sprint(wantSeries), "reason="+string(validate.ReasonBodyTooLarge)) {
					t.Errorf("oversized reply not body_too_large: %v", wantSeries)
				}
			})
		}
	}
}

// TestCallerMaxTokens: the proxy reads the caller's max_tokens from the
// request's body as it passes, on the lean exchange (a body read ahead)
// and on a route's RoundTripper (a body streamed, max_tokens after 64
// KiB of prompt, as an OpenAI SDK puts it after the messages), so that
// a completion the caller's own cap ended is recorded ok, and one a
// provider ended short of it truncated, as instrument records them.
func TestCallerMaxTokens(t *testing.T) {
	srv := faults.Start(t)
	long := strings.Repeat("A long conversation goes on and on. ", 64<<10/36)
	for _, tc := range []struct {
		f      faults.Fault
		n      int
		reason string
	}{
		{faults.Healthy, 3, ""},
		{faults.MaxTokensCapped, 8, "truncated"},
	} {
		for _, c := range []struct{ stream, long bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
			t.Run(fmt.Sprintf("%s/stream=%v/long=%v", tc.f, c.stream, c.long), func(t *testing.T) {
				base, preg, _ := startProxy(t, &Config{Routes: []Route{testRoute("free", srv.URL, validate.Rules{})}}, nil)
				prompt := "Say hello."
				if c.long {
					prompt = long
				}
				body := fmt.Sprintf(`{"model":%q,"messages":[{"role":"user","content":%q}],"stream":%v,"max_tokens":%d}`, faults.Model, prompt, c.stream, tc.n)
				send := func(client *http.Client, url string) reply {
					req, err := http.NewRequest(http.MethodPost, url+"/chat/completions", strings.NewReader(body))
					if err != nil {
						t.Fatal(err)
					}
					req.Header.Set("Content-Type", "application/json")
					return call(client, req)
				}
				dreg := prometheus.NewRegistry()
				direct := &http.Client{Transport: instrument.MustNewMetrics(dreg).Transport("free", validate.MustNew(validate.Rules{}), nil)}
				want, got := send(direct, srv.BaseURL(tc.f)), send(http.DefaultClient, base+"/free/"+string(tc.f)+"/v1")
				if got.status != http.StatusOK || !bytes.Equal(got.body, want.body) {
					t.Fatalf("proxy: %d %q (%v)\ndirect: %d %q", got.status, got.body, got.err, want.status, want.body)
				}
				if !bytes.Contains(got.body, []byte(`"finish_reason":"length"`)) {
					t.Fatalf("the reply did not end on length: %s", got.body)
				}
				verdict := "ok"
				if tc.reason != "" {
					verdict = "soft_fail"
				}
				line := fmt.Sprintf(`llm_gateway_requests_total{code="200",reason=%q,route="free",verdict=%q} 1`, tc.reason, verdict)
				waitSeries(t, preg, line)
				if !strings.Contains(scrape(t, dreg), line+"\n") {
					t.Errorf("instrument did not record %s", line)
				}
			})
		}
	}
}

// TestJudgePanicKeepsServing: a judge that panics (here, a route whose
// Validator is gone) breaks neither the reply nor the proxy, on the lean
// exchange and on a route's RoundTripper, plain and streamed: the client
// gets every byte, the call is not recorded, the panic is counted and
// logged once, and the proxy serves the next request.
func TestJudgePanicKeepsServing(t *testing.T) {
	srv := faults.Start(t)
	for _, lean := range []bool{true, false} {
		t.Run(fmt.Sprintf("lean=%v", lean), func(t *testing.T) {
			rt := testRoute("free", srv.URL, validate.Rules{})
			if !lean {
				rt.HTTPConfig.HTTPHeaders = &commoncfg.Headers{Headers: map[string]commoncfg.Header{"X-Team": {Values: []string{"search"}}}}
			}
			var logs bytes.Buffer
			preg := prometheus.NewRegistry()
			p, err := New(&Config{Routes: []Route{rt}}, preg, slog.New(slog.NewTextHandler(&logs, nil)))
			if err != nil {
				t.Fatal(err)
			}
			// Before the server runs: the judge panics on every reply.
			p.routes.Load().byName["free"].v = nil
			base := serveFront(t, p)
			// The series is there at 0 from the start, so that the
			// first panic is an increase.
			waitSeries(t, preg, `llm_gateway_judge_panics_total{route="free"} 0`)
			for i, stream := range []bool{false, true, false} {
				want := call(&http.Client{}, chatRequest(t, srv.BaseURL(faults.Healthy), stream))
				got := call(http.DefaultClient, chatRequest(t, base+"/free/"+string(faults.Healthy)+"/v1", stream))
				if got.status != http.StatusOK || got.err != nil || !bytes.Equal(got.body, want.body) {
					t.Fatalf("request %d: %d %q (%v); want %q", i, got.status, got.body, got.err, want.body)
				}
			}
			waitSeries(t, preg, `llm_gateway_judge_panics_total{route="free"} 3`)
			if page := scrape(t, preg); strings.Contains(page, "llm_gateway_requests_total{") {
				t.Errorf("a call not judged was recorded:\n%s", page)
			}
			if n := strings.Count(logs.String(), "judging a reply panicked"); n != 1 {
				t.Errorf("the panic logged %d times, want once:\n%s", n, logs.String())
			}
		})
	}
}
