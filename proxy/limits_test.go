package proxy

import (
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	commoncfg "github.com/prometheus/common/config"

	"github.com/hermes-failover/hermes/gateway/validate"
)

// TestConcurrencyLimit: a request over max_concurrent_requests is answered
// 503 without reaching the upstream, counted apart, not recorded.
func TestConcurrencyLimit(t *testing.T) {
	up, release, _ := holdingUpstream(t)
	rt := testRoute("free", up, validate.Rules{})
	rt.MaxConcurrentRequests = 1
	base, reg, _ := startProxy(t, &Config{Routes: []Route{rt}}, nil)
	resp, err := http.DefaultClient.Do(chatRequest(t, base+"/free/v1", true))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	second, err := http.DefaultClient.Do(chatRequest(t, base+"/free/v1", true))
	if err != nil {
		t.Fatal(err)
	}
	second.Body.Close()
	if second.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("second call: %d, want 503", second.StatusCode)
	}
	close(release)
	if _, err := io.Copy(io.Discard, resp.Body); err != nil && !errors.Is(err, io.EOF) {
		t.Fatal(err)
	}
	waitSeries(t, reg, `llm_gateway_requests_total{code="200",reason="",route="free",verdict="ok"} 1`)
	page := scrape(t, reg)
	if !strings.Contains(page, `hermes_proxy_requests_refused_total{route="free"} 1`) || strings.Contains(page, `code="503"`) {
		t.Errorf("metrics:\n%s", page)
	}
}

// TestTotalTimeout: a stream that keeps flowing past total_timeout is cut
// (the client's read fails after the events it got) and recorded as
// truncated, as instrument records a body cut while read.
func TestTotalTimeout(t *testing.T) {
	up := pacedStream(t, -1, 20*time.Millisecond)
	rt := testRoute("free", up, validate.Rules{})
	rt.FirstByteTimeout, rt.IdleTimeout, rt.TotalTimeout = 200*time.Millisecond, time.Second, 300*time.Millisecond
	base, reg, _ := startProxy(t, &Config{Routes: []Route{rt}}, nil)
	r := call(http.DefaultClient, chatRequest(t, base+"/free/v1", true))
	if r.err == nil || r.status != http.StatusOK || !strings.HasPrefix(string(r.body), "data: ") {
		t.Fatalf("want a 200 stream cut while read: %d %q %v", r.status, r.body, r.err)
	}
	waitSeries(t, reg, `llm_gateway_requests_total{code="200",reason="truncated",route="free",verdict="soft_fail"} 1`)
}

// TestIdleTimeoutRunsFromTheLastRead: a stream whose events come closer
// together than idle_timeout flows past it in total, each read restarting
// the gap; when it then stalls, it is cut after idle_timeout and recorded
// as truncated.
func TestIdleTimeoutRunsFromTheLastRead(t *testing.T) {
	up := pacedStream(t, 6, 100*time.Millisecond)
	rt := testRoute("free", up, validate.Rules{})
	rt.FirstByteTimeout, rt.IdleTimeout, rt.TotalTimeout = time.Second, 300*time.Millisecond, 20*time.Second
	base, reg, _ := startProxy(t, &Config{Routes: []Route{rt}}, nil)
	// Cut by the idle gap, about 0.8 s in, not by the total limit.
	cutByIdleGap(t, rt, reg, chatRequest(t, base+"/free/v1", true), 6)
}

// cutByIdleGap calls req, a stream that stalls after n events, and fails
// t unless the stream came as a 200 cut while read after those n events,
// by the idle gap (well before rt's total limit), and is recorded as
// truncated.
func cutByIdleGap(t *testing.T, rt Route, reg *prometheus.Registry, req *http.Request, n int) {
	t.Helper()
	start := time.Now()
	r := call(http.DefaultClient, req)
	if r.err == nil || r.status != http.StatusOK || strings.Count(string(r.body), "data: ") != n {
		t.Fatalf("want a 200 stream of %d events cut while read: %d %q %v", n, r.status, r.body, r.err)
	}
	if took := time.Since(start); took >= rt.TotalTimeout/2 {
		t.Fatalf("the stream was cut after %v: the idle gap (%v) did not end it", took, rt.IdleTimeout)
	}
	waitSeries(t, reg, `llm_gateway_requests_total{code="200",reason="truncated",route="free",verdict="soft_fail"} 1`)
}

// TestFirstByteTimeout: headers later than first_byte_timeout are
// answered 504 and recorded as a timeout.
func TestFirstByteTimeout(t *testing.T) {
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		<-r.Context().Done() // never answers
	}))
	rt := testRoute("free", up, validate.Rules{})
	rt.FirstByteTimeout, rt.IdleTimeout, rt.TotalTimeout = 200*time.Millisecond, 100*time.Millisecond, 10*time.Second
	base, reg, _ := startProxy(t, &Config{Routes: []Route{rt}}, nil)
	start := time.Now()
	r := call(http.DefaultClient, chatRequest(t, base+"/free/v1", false))
	if r.err != nil || r.status != http.StatusGatewayTimeout {
		t.Fatalf("want 504: %d %q %v", r.status, r.body, r.err)
	}
	if took := time.Since(start); took >= rt.TotalTimeout/2 {
		t.Fatalf("answered after %v: the first byte's limit (%v) did not end the call", took, rt.FirstByteTimeout)
	}
	waitSeries(t, reg, `llm_gateway_requests_total{code="timeout",reason="",route="free",verdict="hard_fail"} 1`)
}

// pacedStream serves a stream of unfinished chunks, one every gap (the
// pace is the fault itself). After n events (n < 0: never) it stalls
// until the caller hangs up.
func pacedStream(t *testing.T, n int, gap time.Duration) string {
	return serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for i := 0; n < 0 || i < n; i++ {
			fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"more \"},\"finish_reason\":null}]}\n\n")
			if rc.Flush() != nil {
				return
			}
			select {
			case <-r.Context().Done():
				return
			case <-time.After(gap):
			}
		}
		<-r.Context().Done() // the stall
	}))
}

// TestLimitsOverTLS: an https:// upstream on the lean exchange (HTTP/1.1
// asked) keeps a stream whose events come further apart than the look
// at the caller (each look is a read deadline that passes on the TLS
// connection, which is read again), and still cuts one that stalls past
// idle_timeout.
func TestLimitsOverTLS(t *testing.T) {
	event := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"more \"},\"finish_reason\":null}]}\n\n"
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		rc := http.NewResponseController(w)
		for range 4 {
			io.WriteString(w, event)
			rc.Flush()
			select {
			case <-r.Context().Done():
				return
			case <-time.After(2 * callerCheck):
			}
		}
		if r.URL.Query().Has("stall") {
			<-r.Context().Done()
			return
		}
		io.WriteString(w, "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
	}))
	t.Cleanup(srv.Close)
	rt := testRoute("free", srv.URL, validate.Rules{})
	rt.HTTPConfig.EnableHTTP2 = false
	rt.HTTPConfig.TLSConfig = commoncfg.TLSConfig{CA: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})), ServerName: "example.com"}
	base, reg, p := startProxy(t, &Config{Routes: []Route{rt}}, nil)
	if p.routes.Load().byName["free"].lean == nil {
		t.Fatal("the https:// route with HTTP/1.1 asked is not on the lean exchange")
	}
	r := call(http.DefaultClient, chatRequest(t, base+"/free/v1", true))
	if r.err != nil || r.status != http.StatusOK || strings.Count(string(r.body), "data: ") != 6 {
		t.Fatalf("want the whole stream of 6 events: %d %q %v", r.status, r.body, r.err)
	}
	waitSeries(t, reg, `llm_gateway_requests_total{code="200",reason="",route="free",verdict="ok"} 1`)

	req := chatRequest(t, base+"/free/v1", true)
	req.URL.RawQuery = "stall"
	cutByIdleGap(t, rt, reg, req, 4)
}

// TestKeptConnectionOutlivesItsDeadline: at a night's pace a kept
// upstream connection waits in the pool long past the read deadline its
// last call left on it; the next call takes it (no new connection) and
// is answered, its own deadlines set afresh.
func TestKeptConnectionOutlivesItsDeadline(t *testing.T) {
	srv, conns := countingServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"Hello there."},"finish_reason":"stop"}]}`)
	}))
	base, reg, _ := startProxy(t, &Config{Routes: []Route{testRoute("free", srv.URL, validate.Rules{})}}, nil)
	for i := range 2 {
		if i == 1 {
			// The condition itself: the first call's read deadline (the
			// look at the caller, callerCheck after its start) has passed.
			time.Sleep(2 * callerCheck)
		}
		r := call(http.DefaultClient, chatRequest(t, base+"/free/v1", false))
		if r.err != nil || r.status != http.StatusOK {
			t.Fatalf("call %d: %d %q %v", i+1, r.status, r.body, r.err)
		}
	}
	waitSeries(t, reg, `llm_gateway_requests_total{code="200",reason="",route="free",verdict="ok"} 2`)
	if n := conns.Load(); n != 1 {
		t.Errorf("%d upstream connections, want the first one kept and used again", n)
	}
}
