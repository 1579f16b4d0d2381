package proxy

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/gateway/validate"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// TestClientBodyTimeout: a caller that declares a request body, sends
// half of it (or none of it) and then nothing is answered 408 once
// client_body_timeout passes without a byte, as nginx's
// client_body_timeout answers it. Its upstream call is cancelled (a body
// read ahead never reaches the upstream; a larger one, streamed, is cut
// there), the route's slot is freed, and the call is not in the
// contract: the upstream did nothing wrong. One that sent part of its
// body is counted in hermes_proxy_request_body_timeouts_total. The
// caller is a real TCP client that stays connected throughout.
func TestClientBodyTimeout(t *testing.T) {
	for _, c := range []struct {
		name string
		size int
	}{
		{"no byte", 0},
		{"read ahead", 512},
		{"streamed", 4 * maxReadAhead},
	} {
		t.Run(c.name, func(t *testing.T) {
			var calls atomic.Int32
			cut := make(chan struct{}, 1) // the upstream's read of the stalled body failed
			up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				calls.Add(1)
				if _, err := io.Copy(io.Discard, r.Body); err != nil {
					cut <- struct{}{}
					return
				}
				w.Header().Set("Content-Type", "application/json")
				io.WriteString(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"Hello there."},"finish_reason":"stop"}]}`)
			}))
			rt := testRoute("free", up, validate.Rules{})
			rt.MaxConcurrentRequests = 1
			rt.ClientBodyTimeout = 100 * time.Millisecond
			base, reg, _ := startProxy(t, &Config{Routes: []Route{rt}}, nil)

			conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close()
			body := `{"model":"m","messages":[{"role":"user","content":"` + strings.Repeat("fox ", c.size/4) + `"}]}`
			sent := body[:len(body)/2]
			if c.size == 0 {
				sent = "" // the headers alone
			}
			fmt.Fprintf(conn, "POST /free/v1/chat/completions HTTP/1.1\r\nHost: proxy\r\nContent-Type: application/json\r\nAuthorization: Bearer %s\r\nContent-Length: %d\r\n\r\n%s",
				secret, len(body), sent)
			// The bound of a failure (the proxy waiting for the body for
			// ever), not of the proxy's speed.
			conn.SetReadDeadline(time.Now().Add(testLimits.TotalTimeout))
			resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
			if err != nil {
				t.Fatalf("no reply to the stalled caller: %v", err)
			}
			reply, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != http.StatusRequestTimeout {
				t.Fatalf("stalled caller answered %d %q, want 408", resp.StatusCode, reply)
			}
			if bytes.Contains(reply, []byte(secret)) {
				t.Errorf("the reply holds the caller's key: %q", reply)
			}

			if c.size > maxReadAhead {
				select {
				case <-cut:
				case <-time.After(testLimits.TotalTimeout):
					t.Fatal("the upstream call was not cut")
				}
			}
			// The slot is free again: the next call reaches the upstream.
			testenv.EventuallyDetail(t, testLimits.TotalTimeout, "the route's slot freed", func() (bool, string) {
				r := call(http.DefaultClient, chatRequest(t, base+"/free/v1", false))
				return r.status == http.StatusOK, fmt.Sprintf("%d %q %v", r.status, r.body, r.err)
			})
			wantCalls := int32(1) // the healthy call
			if c.size > maxReadAhead {
				wantCalls++ // and the one cut
			}
			if n := calls.Load(); n != wantCalls {
				t.Errorf("the upstream got %d calls, want %d", n, wantCalls)
			}
			if c.size != 0 || runtime.GOOS == "linux" {
				// A caller who sent no byte of the body is counted by an
				// event loop; fasthttp's server (elsewhere than Linux)
				// answers it before the handler, with the request reset
				// (requestError): not counted there, as not in the
				// contract.
				waitSeries(t, reg, `hermes_proxy_request_body_timeouts_total{route="free"} 1`)
			}
			waitSeries(t, reg, `llm_gateway_requests_total{code="200",reason="",route="free",verdict="ok"} 1`)
			for k, v := range contract(t, reg) {
				if strings.HasPrefix(k, "llm_gateway_requests_total") && (k != "llm_gateway_requests_total{code=200,reason=,route=free,verdict=ok}" || v != 1) {
					t.Errorf("the stalled call was recorded: %s %v", k, v)
				}
			}
		})
	}
}

// TestClientBodyTimeoutEndsWithTheBody: once the caller's body has
// arrived whole, client_body_timeout no longer applies: a stream that
// outlasts it many times over is not cut. (net/http's server reads the
// connection during the reply, to see the caller hang up; a read
// deadline left set would end that read and cancel the call.)
func TestClientBodyTimeoutEndsWithTheBody(t *testing.T) {
	up, release, gone := holdingUpstream(t)
	rt := testRoute("free", up, validate.Rules{})
	rt.ClientBodyTimeout = 20 * time.Millisecond
	base, reg, _ := startProxy(t, &Config{Routes: []Route{rt}}, nil)
	resp, err := http.DefaultClient.Do(chatRequest(t, base+"/free/v1", true))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	// A window for the fault to show, not a measure of speed: ten times
	// the timeout with the stream open.
	select {
	case <-gone:
		t.Fatal("the stream was cut while it outlasted client_body_timeout")
	case <-time.After(10 * rt.ClientBodyTimeout):
	}
	close(release)
	b, err := io.ReadAll(resp.Body)
	if err != nil || !strings.HasSuffix(string(b), "data: [DONE]\n\n") {
		t.Fatalf("stream: %q, %v", b, err)
	}
	waitSeries(t, reg, `llm_gateway_requests_total{code="200",reason="",route="free",verdict="ok"} 1`)
}

// TestClientBodyTimeoutAfterTheReplyBegan: an upstream that answers
// before it has the whole request body (full duplex) has begun its
// reply when the caller stalls: the reply is cut, the upstream call
// cancelled, and the call counted as a body timeout, not recorded.
func TestClientBodyTimeoutAfterTheReplyBegan(t *testing.T) {
	gone := make(chan struct{}, 1)
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.NewResponseController(w).EnableFullDuplex()
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"},\"finish_reason\":null}]}\n\n")
		http.NewResponseController(w).Flush()
		io.Copy(io.Discard, r.Body)
		<-r.Context().Done()
		gone <- struct{}{}
	}))
	rt := testRoute("free", up, validate.Rules{})
	rt.ClientBodyTimeout = 100 * time.Millisecond
	base, reg, _ := startProxy(t, &Config{Routes: []Route{rt}}, nil)

	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"` + strings.Repeat("fox ", maxReadAhead) + `"}]}`
	fmt.Fprintf(conn, "POST /free/v1/chat/completions HTTP/1.1\r\nHost: proxy\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body[:len(body)/2])
	conn.SetReadDeadline(time.Now().Add(testLimits.TotalTimeout)) // the bound of a failure
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no reply: %v", err)
	}
	got, err := io.ReadAll(resp.Body)
	if ne, ok := err.(net.Error); ok && ne.Timeout() {
		t.Fatalf("the reply was not cut: the client waited for it until %v", err)
	}
	if resp.StatusCode != http.StatusOK || err == nil || !strings.HasPrefix(string(got), "data: ") || strings.Contains(string(got), "[DONE]") {
		t.Fatalf("want the reply's first event, then the connection cut: %d %q %v", resp.StatusCode, got, err)
	}
	select {
	case <-gone:
	case <-time.After(testLimits.TotalTimeout):
		t.Fatal("the upstream call was not cancelled")
	}
	waitSeries(t, reg, `hermes_proxy_request_body_timeouts_total{route="free"} 1`)
	for k, v := range contract(t, reg) {
		t.Errorf("recorded: %s %v", k, v)
	}
}
