package proxy

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	commoncfg "github.com/prometheus/common/config"

	"github.com/hermes-failover/hermes/gateway/validate"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// TestStreamPassesEventByEvent: the first event reaches the caller while
// the upstream holds the rest, and nothing is recorded before the end,
// on both of the front's upstream paths: the lean exchange (a route that
// needs nothing but an HTTP/1.1 connection) and a route's RoundTripper
// (here prometheus/common's, for a route that adds a header).
func TestStreamPassesEventByEvent(t *testing.T) {
	for _, c := range []struct {
		name string
		lean bool
	}{{"lean", true}, {"round tripper", false}} {
		t.Run(c.name, func(t *testing.T) {
			up, release, _ := holdingUpstream(t)
			rt := testRoute("free", up, validate.Rules{})
			if !c.lean {
				rt.HTTPConfig.HTTPHeaders = &commoncfg.Headers{Headers: map[string]commoncfg.Header{"X-Team": {Values: []string{"search"}}}}
			}
			base, reg, p := startProxy(t, &Config{Routes: []Route{rt}}, nil)
			if got := p.routes.Load().byName["free"].lean != nil; got != c.lean {
				t.Fatalf("the route takes the lean exchange: %v, want %v", got, c.lean)
			}
			resp, err := http.DefaultClient.Do(chatRequest(t, base+"/free/v1", true))
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			r := bufio.NewReader(resp.Body)
			if line, err := r.ReadString('\n'); err != nil || !strings.Contains(line, `"Hello"`) {
				t.Fatalf("first event %q, %v", line, err)
			}
			if page := scrape(t, reg); strings.Contains(page, "llm_gateway_requests_total") {
				t.Fatalf("recorded before the end of the stream:\n%s", page)
			}
			close(release)
			io.Copy(io.Discard, r)
			waitSeries(t, reg, `llm_gateway_requests_total{code="200",reason="",route="free",verdict="ok"} 1`)
		})
	}
}

// TestCallerHangsUp: a caller that hangs up in the middle of a stream
// (while the upstream sends nothing, so no write to it fails) cancels the
// upstream call, and nothing is recorded. fasthttp's server does not
// watch the caller: the call's clock peeks at its connection.
func TestCallerHangsUp(t *testing.T) {
	up, _, gone := holdingUpstream(t)
	base, reg, p := startProxy(t, &Config{Routes: []Route{testRoute("free", up, validate.Rules{})}}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	resp, err := http.DefaultClient.Do(chatRequest(t, base+"/free/v1", true).WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(resp.Body).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	cancel()
	resp.Body.Close()
	<-gone // the upstream saw the call cancelled
	// The proxy is done with it: the route's slot is free.
	testenv.Eventually(t, testLimits.TotalTimeout, "the route's slot freed", func() bool {
		return len(p.routes.Load().byName["free"].slots) == 0
	})
	if c := contract(t, reg); len(c) != 0 {
		t.Fatalf("recorded: %v", c)
	}
}

// TestReplyBeforeRequestEnds: an upstream may answer before the request's
// body has ended (its last chunk still on the way); the reply's first
// event must reach the caller then, and the rest of the request still
// reach the upstream. Without full duplex, net/http's server would hold
// the reply's headers until it had consumed the request body, then close
// it under the transport.
func TestReplyBeforeRequestEnds(t *testing.T) {
	rest := make(chan string, 1)
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.NewResponseController(w).EnableFullDuplex() // answers while the request goes on
		var req map[string]any
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"},\"finish_reason\":null}]}\n\n")
		http.NewResponseController(w).Flush()
		tail, _ := io.ReadAll(r.Body)
		rest <- string(tail)
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" there, how can I help?\"},\"finish_reason\":\"stop\"}]}\n\n")
		fmt.Fprint(w, "data: [DONE]\n\n")
	}))
	base, reg, _ := startProxy(t, &Config{Routes: []Route{testRoute("free", up, validate.Rules{})}}, nil)
	pr, pw := io.Pipe()
	req, err := http.NewRequest(http.MethodPost, base+"/free/v1/chat/completions", pr) // chunked: no length
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	go fmt.Fprint(pw, `{"model":"m","stream":true,"messages":[{"role":"user","content":"Hi"}]}`)
	// Without full duplex the reply never starts: the timeout turns that
	// deadlock into a failure.
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body := bufio.NewReader(resp.Body)
	if line, err := body.ReadString('\n'); err != nil || !strings.Contains(line, `"Hello"`) {
		t.Fatalf("first event %q, %v", line, err)
	}
	fmt.Fprint(pw, "\n  ")
	pw.Close()
	if tail := <-rest; tail != "\n  " {
		t.Errorf("the end of the request reached the upstream as %q", tail)
	}
	if all, err := io.ReadAll(body); err != nil || !strings.HasSuffix(string(all), "data: [DONE]\n\n") {
		t.Fatalf("the rest of the stream: %q, %v", all, err)
	}
	waitSeries(t, reg, `llm_gateway_requests_total{code="200",reason="",route="free",verdict="ok"} 1`)
}

// TestCallerHangsUpBeforeTheReply: a caller that hangs up while the
// upstream has not answered yet (a plain completion being written)
// cancels the upstream call, and nothing is recorded, on both of the
// front's upstream paths. No write to the caller fails here: the call's
// clock sees the hang-up on the caller's socket.
func TestCallerHangsUpBeforeTheReply(t *testing.T) {
	for _, lean := range []bool{true, false} {
		t.Run(fmt.Sprintf("lean=%v", lean), func(t *testing.T) {
			arrived, gone := make(chan struct{}, 1), make(chan struct{}, 1)
			up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				arrived <- struct{}{}
				<-r.Context().Done()
				gone <- struct{}{}
			}))
			rt := testRoute("free", up, validate.Rules{})
			if !lean {
				rt.HTTPConfig.HTTPHeaders = &commoncfg.Headers{Headers: map[string]commoncfg.Header{"X-Team": {Values: []string{"search"}}}}
			}
			base, reg, p := startProxy(t, &Config{Routes: []Route{rt}}, nil)
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				resp, err := http.DefaultClient.Do(chatRequest(t, base+"/free/v1", false).WithContext(ctx))
				if err == nil {
					resp.Body.Close()
				}
				done <- err
			}()
			<-arrived
			cancel()
			<-done
			select {
			case <-gone: // the upstream saw the call cancelled
			case <-time.After(testLimits.TotalTimeout):
				t.Fatal("the upstream call was not cancelled")
			}
			testenv.Eventually(t, testLimits.TotalTimeout, "the route's slot freed", func() bool {
				return len(p.routes.Load().byName["free"].slots) == 0
			})
			if c := contract(t, reg); len(c) != 0 {
				t.Fatalf("recorded: %v", c)
			}
		})
	}
}

// TestEventsThatArriveTogetherLeaveTogether: events the upstream sent as
// three chunks in one write reach the caller in one chunk (one write and
// one flush, as from nginx), not one chunk each, which is what fasthttp's
// own client would hand over; the stream then goes on event by event.
func TestEventsThatArriveTogetherLeaveTogether(t *testing.T) {
	event := func(s string) string {
		return "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"" + s + "\"},\"finish_reason\":null}]}\n\n"
	}
	chunk := func(s string) string { return fmt.Sprintf("%x\r\n%s\r\n", len(s), s) }
	together := event("Hello") + event(" there,") + event(" how")
	release := make(chan struct{})
	up := rawServer(t, func(c net.Conn, br *bufio.Reader) {
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		io.Copy(io.Discard, req.Body)
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n"+
			chunk(event("Hello"))+chunk(event(" there,"))+chunk(event(" how")))
		<-release
		last := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" can I help?\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
		io.WriteString(c, chunk(last)+"0\r\n\r\n")
	})
	defer close(release)
	base, _, _ := startProxy(t, &Config{Routes: []Route{testRoute("free", up, validate.Rules{})}}, nil)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	body := `{"model":"m","stream":true,"messages":[{"role":"user","content":"Hi"}]}`
	fmt.Fprintf(conn, "POST /free/v1/chat/completions HTTP/1.1\r\nHost: proxy\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s", len(body), body)
	conn.SetReadDeadline(time.Now().Add(testLimits.TotalTimeout)) // the bound of a failure
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.TransferEncoding == nil || resp.TransferEncoding[0] != "chunked" {
		t.Fatalf("the stream is not chunked to the caller: %v", resp.TransferEncoding)
	}
	// The first chunk's size line, read off the wire (resp.Body would
	// hide the framing).
	size, err := br.ReadString('\n')
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("%x\r\n", len(together)); size != want {
		t.Errorf("first chunk of %q bytes, want %q: the three events that arrived together", strings.TrimSpace(size), strings.TrimSpace(want))
	}
}
