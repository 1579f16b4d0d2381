// Package proxy_test runs `hermes proxy` end to end: a real nginx, standing
// in for the user's gateway with the recipe of docs/proxy.md, in front of
// a real `hermes proxy` process, in front of the fault server. Every fault
// of internal/faults, plain and streamed, must be recorded as
// gateway/instrument records the same call made straight to the fault
// server, and the client must get the same bytes.
//
//	CI=true go test -count=1 -v ./test/proxy/
package proxy_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/gateway/instrument"
	"github.com/hermes-failover/hermes/gateway/validate"
	"github.com/hermes-failover/hermes/internal/faults"
	"github.com/hermes-failover/hermes/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// Recipe is the nginx location that points a gateway's route at the
// proxy (docs/proxy.md): %[1]s is the route, %[2]s the proxy's address.
// proxy_buffering off passes each event of a stream on as it arrives;
// client_max_body_size takes a long prompt (nginx's 1m answers 413).
const Recipe = `location /%[1]s/v1/ {
            proxy_pass http://%[2]s/%[1]s/v1/;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            proxy_buffering off;
            proxy_read_timeout 600s;
            client_max_body_size 32m;
        }`

// limits make the faults that wait for the client give up in a second.
const limits = `    first_byte_timeout: 1s
    idle_timeout: 1s
    total_timeout: 10s
`

const secret = "sk-e2e-SECRET-7d1f"

// stack is nginx → hermes proxy → upstreams.
type stack struct {
	nginx, proxy string // base URLs
	config       string // the proxy's configuration file
	hermes       *testenv.Process
}

// stackRoute is one route of the proxy, and its nginx location.
type stackRoute struct {
	name, upstream string
	validation     string // the route's validation, inline YAML; "" for the defaults
}

// startStack starts hermes proxy with one route per fault (named after it)
// plus the routes of extra, and nginx with the recipe for each.
func startStack(t *testing.T, srv *faults.Server, extra map[string]string) stack {
	t.Helper()
	var routes []stackRoute
	for _, f := range append(slices.Clone(faults.Catalogue), faults.Oversized) {
		r := stackRoute{name: string(f), upstream: srv.URL + "/" + string(f)}
		if f == faults.Oversized {
			r.validation = "{max_body_bytes: 65536}"
		}
		routes = append(routes, r)
	}
	for name, up := range extra {
		routes = append(routes, stackRoute{name: name, upstream: up})
	}
	return startRoutes(t, routes)
}

// startRoutes starts hermes proxy with routes, and nginx with the recipe
// for each.
func startRoutes(t *testing.T, routes []stackRoute) stack {
	t.Helper()
	nginx := testenv.Binary(t, "nginx")
	dir := t.TempDir()
	routes = slices.SortedFunc(slices.Values(routes), func(a, b stackRoute) int { return strings.Compare(a.name, b.name) })
	var cfg strings.Builder
	cfg.WriteString("routes:\n")
	for _, r := range routes {
		fmt.Fprintf(&cfg, "  - name: %s\n    upstream: %s\n%s", r.name, r.upstream, limits)
		if r.validation != "" {
			fmt.Fprintf(&cfg, "    validation: %s\n", r.validation)
		}
	}
	s := stack{config: filepath.Join(dir, "proxy.yaml")}
	if err := os.WriteFile(s.config, []byte(cfg.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := testenv.FreeAddr(t)
	s.proxy = "http://" + addr
	hs := testenv.NewServer(t, "hermes-proxy", dir, s.proxy+"/-/ready", testenv.HermesBinary(t),
		"proxy", "--config", s.config, "--web.listen-address", addr, "--log.level", "debug")
	hs.Start(t)
	s.hermes = hs.Process()

	var locations []string
	for _, r := range routes {
		locations = append(locations, fmt.Sprintf(Recipe, r.name, addr))
	}
	naddr := testenv.FreeAddr(t)
	// The recipe's locations, nested in the test nginx's location /.
	conf := testenv.NginxConf(t, dir, naddr, strings.Join(locations, "\n            "))
	testenv.StartNginx(t, nginx, dir, conf, filepath.Join(dir, "error.log"), naddr)
	s.nginx = "http://" + naddr
	return s
}

// chatRequest is a chat completion request to base (ending in /v1), its
// key as a bearer token.
func chatRequest(t *testing.T, base string, stream bool) *http.Request {
	t.Helper()
	return jsonRequest(t, base+"/chat/completions", map[string]any{
		"model":    faults.Model,
		"messages": []any{map[string]any{"role": "user", "content": "Say hello."}},
		"stream":   stream,
	}, "Authorization", "Bearer "+secret)
}

// jsonRequest is a POST of body, as JSON, to url, with the header
// names and values of header.
func jsonRequest(t *testing.T, url string, body map[string]any, header ...string) *http.Request {
	t.Helper()
	data, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	return req
}

// reply is what a client got, without the headers a hop adds (Date,
// Server, hop-by-hop).
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
	for _, k := range []string{"Date", "Server", "Connection", "Keep-Alive", "Transfer-Encoding"} {
		h.Del(k)
	}
	return reply{status: resp.StatusCode, header: h, body: body, err: err}
}

// contract is the gateway metric contract of families, in the form two
// recorders of the same calls agree on: the request counters, each
// histogram's count and the sizes' sum (durations differ), the judge's
// panics once there is one.
func contract(mfs []*dto.MetricFamily) map[string]float64 {
	out := map[string]float64{}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "llm_gateway_") {
			continue
		}
		for _, m := range mf.GetMetric() {
			var ls []string
			for _, l := range m.GetLabel() {
				ls = append(ls, l.GetName()+"="+l.GetValue())
			}
			slices.Sort(ls)
			key := mf.GetName() + "{" + strings.Join(ls, ",") + "}"
			switch {
			case m.Counter != nil && mf.GetName() == "llm_gateway_judge_panics_total" && m.GetCounter().GetValue() == 0:
				// There before any call: hermes proxy makes it for each
				// route of its file, instrument at a route's first call.
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

// scrape reads the proxy's /metrics page, and its text.
func scrape(t *testing.T, base string) (map[string]float64, string) {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	text, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := parser.TextToMetricFamilies(bytes.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	var mfs []*dto.MetricFamily
	for _, mf := range fams {
		mfs = append(mfs, mf)
	}
	return contract(mfs), string(text)
}

// delta is what changed from before to after.
func delta(before, after map[string]float64) map[string]float64 {
	out := map[string]float64{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}

// TestThroughNginx sends every fault, plain and streamed, through nginx
// and hermes proxy, and straight to the fault server through instrument's
// Transport: the proxy records what instrument records, and the client
// gets the same status, headers and bytes (a call that got no reply is
// the proxy's 504 or 502, passed on by nginx).
func TestThroughNginx(t *testing.T) {
	srv := faults.Start(t)
	s := startStack(t, srv, nil)
	for _, f := range append(slices.Clone(faults.Catalogue), faults.Oversized) {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", f, stream), func(t *testing.T) {
				rules := validate.Rules{}
				if f == faults.Oversized {
					rules.MaxBodyBytes = 65536
				}
				sameAsDirect(t, s, string(f), srv.BaseURL(f), rules, func(base string) *http.Request { return chatRequest(t, base, stream) })
			})
		}
	}
	assertNoKey(t, s)
}

// TestMessagesThroughNginx is TestThroughNginx for Anthropic's Messages
// API: every fault, plain and streamed, sent as a call of
// /v1/messages with x-api-key to routes whose validation format is
// anthropic_messages (their judged path /messages by default).
func TestMessagesThroughNginx(t *testing.T) {
	throughNginxIn(t, validate.FormatAnthropicMessages, messagesRequest)
}

// TestResponsesThroughNginx is TestThroughNginx for OpenAI's Responses
// API: every fault, plain and streamed, sent as a call of /v1/responses
// to routes whose validation format is openai_responses (their judged
// path /responses by default).
func TestResponsesThroughNginx(t *testing.T) {
	throughNginxIn(t, validate.FormatOpenAIResponses, responsesRequest)
}

// throughNginxIn sends every fault of the catalogue, plain and streamed,
// as the call newRequest makes, through nginx and the proxy to routes
// whose validation format is format, and compares each with the same
// call made directly (sameAsDirect).
func throughNginxIn(t *testing.T, format validate.Format, newRequest func(t *testing.T, base string, stream bool) *http.Request) {
	srv := faults.Start(t)
	var routes []stackRoute
	for _, f := range faults.Catalogue {
		routes = append(routes, stackRoute{name: string(f), upstream: srv.URL + "/" + string(f), validation: "{format: " + string(format) + "}"})
	}
	s := startRoutes(t, routes)
	rules := validate.Rules{Format: format}
	for _, f := range faults.Catalogue {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/stream=%v", f, stream), func(t *testing.T) {
				sameAsDirect(t, s, string(f), srv.BaseURL(f), rules, func(base string) *http.Request { return newRequest(t, base, stream) })
			})
		}
	}
	assertNoKey(t, s)
}

// responsesRequest is a call of OpenAI's Responses API to base (ending
// in /v1).
func responsesRequest(t *testing.T, base string, stream bool) *http.Request {
	t.Helper()
	return jsonRequest(t, base+"/responses", map[string]any{
		"model":             faults.Model,
		"input":             "Say hello.",
		"max_output_tokens": 1024,
		"stream":            stream,
	}, "Authorization", "Bearer "+secret)
}

// messagesRequest is a call of Anthropic's Messages API to base (ending
// in /v1), with its key in x-api-key as Anthropic's SDKs send it.
func messagesRequest(t *testing.T, base string, stream bool) *http.Request {
	t.Helper()
	return jsonRequest(t, base+"/messages", map[string]any{
		"model":      faults.Model,
		"max_tokens": 1024,
		"messages":   []any{map[string]any{"role": "user", "content": "Say hello."}},
		"stream":     stream,
	}, "x-api-key", secret, "anthropic-version", "2023-06-01")
}

// sameAsDirect sends the request that newRequest makes for a base URL
// (ending in /v1) straight to direct through instrument's Transport
// judging by rules, and to route through nginx and the proxy: the proxy
// records what instrument records, and the client gets the same status,
// headers and bytes (a call that got no reply is the proxy's 504 or 502,
// passed on by nginx).
func sameAsDirect(t *testing.T, s stack, route, direct string, rules validate.Rules, newRequest func(base string) *http.Request) {
	t.Helper()
	reg := prometheus.NewRegistry()
	m := instrument.MustNewMetrics(reg)
	client := &http.Client{Timeout: time.Second,
		Transport: m.Transport(route, validate.MustNew(rules), &http.Transport{DisableCompression: true})}
	want := call(client, newRequest(direct))
	wantMfs, _ := reg.Gather()
	wantSeries := contract(wantMfs)

	before, _ := scrape(t, s.proxy)
	got := call(http.DefaultClient, newRequest(s.nginx+"/"+route+"/v1"))
	testenv.EventuallyDetail(t, 10*time.Second, "the proxy recorded the call as instrument does", func() (bool, string) {
		after, _ := scrape(t, s.proxy)
		d := delta(before, after)
		return fmt.Sprint(d) == fmt.Sprint(wantSeries), fmt.Sprintf("proxy %v\ndirect %v", d, wantSeries)
	})
	t.Logf("recorded %v", wantSeries)
	if len(wantSeries) == 0 {
		t.Fatal("nothing recorded")
	}
	if want.status == 0 {
		for c, status := range map[string]int{instrument.CodeTimeout: http.StatusGatewayTimeout, instrument.CodeConnError: http.StatusBadGateway} {
			if strings.Contains(fmt.Sprint(wantSeries), "code="+c) && got.status != status {
				t.Errorf("client got %d (%v), want %d for %s", got.status, got.err, status, c)
			}
		}
		return
	}
	if got.status != want.status || !bytes.Equal(got.body, want.body) {
		t.Errorf("through nginx and the proxy: %d %q (%v)\ndirect: %d %q (%v)", got.status, got.body, got.err, want.status, want.body, want.err)
	}
	if fmt.Sprint(got.header) != fmt.Sprint(want.header) {
		t.Errorf("headers through nginx and the proxy %v, direct %v", got.header, want.header)
	}
	if (got.err == nil) != (want.err == nil) {
		t.Errorf("read error through nginx and the proxy %v, direct %v", got.err, want.err)
	}
}

// assertNoKey: the API key is neither on the proxy's /metrics nor in its
// log, and /metrics has the process's own series.
func assertNoKey(t *testing.T, s stack) {
	t.Helper()
	_, page := scrape(t, s.proxy)
	logs := testenv.Tail(s.hermes.LogPath, 10000)
	for what, text := range map[string]string{"/metrics": page, "the proxy's log": logs} {
		if strings.Contains(text, secret) {
			t.Errorf("the API key is in %s", what)
		}
	}
	for _, want := range []string{"hermes_build_info{", "process_resident_memory_bytes ", "go_goroutines ", "hermes_proxy_config_last_reload_successful 1"} {
		if !strings.Contains(page, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// heldUpstream sends a stream's first event and holds the rest until
// release is closed; seen keeps the Authorization it received.
type heldUpstream struct {
	URL     string
	release chan struct{}
	mu      sync.Mutex
	auth    []string
}

func startHeld(t *testing.T) *heldUpstream {
	u := &heldUpstream{release: make(chan struct{})}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		u.mu.Lock()
		u.auth = append(u.auth, r.Header.Get("Authorization"))
		u.mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"},\"finish_reason\":null}]}\n\n")
		http.NewResponseController(w).Flush()
		select {
		case <-u.release:
		case <-r.Context().Done():
			return
		}
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" there, how can I help?\"},\"finish_reason\":\"stop\"}]}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	})}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	u.URL = "http://" + l.Addr().String()
	return u
}

// TestEventsOneByOneAcrossReload: through nginx and the proxy, a stream's
// first event reaches the client while the upstream holds the rest; the
// Authorization reaches the upstream unchanged; a SIGHUP that reloads a
// changed configuration leaves the open stream to complete, and it is
// recorded; a bad file then keeps the configuration.
func TestEventsOneByOneAcrossReload(t *testing.T) {
	srv := faults.Start(t)
	held := startHeld(t)
	s := startStack(t, srv, map[string]string{"held": held.URL})

	resp, err := http.DefaultClient.Do(chatRequest(t, s.nginx+"/held/v1", true))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body := bufio.NewReader(resp.Body)
	if line, err := body.ReadString('\n'); err != nil || !strings.Contains(line, `"Hello"`) {
		t.Fatalf("first event %q, %v", line, err)
	}
	held.mu.Lock()
	auth := held.auth[0]
	held.mu.Unlock()
	if auth != "Bearer "+secret {
		t.Errorf("upstream got Authorization %q", auth)
	}

	// Reload with one more route while the stream is open.
	data, err := os.ReadFile(s.config)
	if err != nil {
		t.Fatal(err)
	}
	extra := fmt.Sprintf("  - name: added\n    upstream: %s\n", srv.URL+"/healthy")
	if err := os.WriteFile(s.config, append(data, extra...), 0o644); err != nil {
		t.Fatal(err)
	}
	_, before := scrape(t, s.proxy)
	if err := s.hermes.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testenv.EventuallyDetail(t, 10*time.Second, "the new route answers", func() (bool, string) {
		r := call(http.DefaultClient, chatRequest(t, s.proxy+"/added/v1", false))
		return r.status == http.StatusOK, fmt.Sprint(r.status, r.err)
	})
	close(held.release)
	rest, err := io.ReadAll(body)
	if err != nil || !strings.HasSuffix(string(rest), "data: [DONE]\n\n") {
		t.Fatalf("the stream open across the reload: %q, %v", rest, err)
	}
	okSeries := `llm_gateway_requests_total{code="200",reason="",route="held",verdict="ok"} 1`
	testenv.EventuallyDetail(t, 10*time.Second, okSeries, func() (bool, string) {
		_, page := scrape(t, s.proxy)
		return strings.Contains(page, okSeries), page
	})
	if strings.Contains(before, "route=\"added\"") {
		t.Fatal("the route existed before the reload")
	}

	// A bad file keeps the current routes.
	if err := os.WriteFile(s.config, append(data, "  - name: broken\n    upstream: ftp://x\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := s.hermes.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	testenv.EventuallyDetail(t, 10*time.Second, "the failed reload is exported", func() (bool, string) {
		_, page := scrape(t, s.proxy)
		return strings.Contains(page, "hermes_proxy_config_last_reload_successful 0\n"), page
	})
	if r := call(http.DefaultClient, chatRequest(t, s.proxy+"/added/v1", false)); r.status != http.StatusOK {
		t.Errorf("the route of the last good configuration: %d %v", r.status, r.err)
	}
	if log := testenv.Tail(s.hermes.LogPath, 10000); !strings.Contains(log, "reload failed") || !strings.Contains(log, "upstream: must be an absolute") {
		t.Errorf("the failed reload was not logged:\n%s", log)
	}
}
