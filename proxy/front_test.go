package proxy

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	commoncfg "github.com/prometheus/common/config"
	"github.com/valyala/fasthttp"

	"github.com/hermes-failover/hermes/gateway/validate"
)

// TestPlainReplyNotHeldBack: a plain reply of declared length (not an
// event stream, which ReverseProxy flushes on its own) reaches the caller
// piece by piece as the upstream sends it: the caller reads the first
// piece while the upstream still holds back the rest.
func TestPlainReplyNotHeldBack(t *testing.T) {
	first := `{"choices":[{"index":0,"message":{"role":"assistant","content":"Hello`
	rest := ` there."},"finish_reason":"stop"}]}`
	release := make(chan struct{})
	up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Content-Length", strconv.Itoa(len(first)+len(rest)))
		io.WriteString(w, first)
		http.NewResponseController(w).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
			return
		}
		io.WriteString(w, rest)
	}))
	base, _, _ := startProxy(t, &Config{Routes: []Route{testRoute("free", up, validate.Rules{})}}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := chatRequest(t, base+"/free/v1", false).WithContext(ctx)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, len(first))
	if _, err := io.ReadFull(resp.Body, buf); err != nil {
		t.Fatalf("the first piece did not arrive before the rest was sent: %v", err)
	}
	close(release)
	b, err := io.ReadAll(resp.Body)
	if err != nil || string(buf)+string(b) != first+rest {
		t.Errorf("reply %q, %v; want %q", string(buf)+string(b), err, first+rest)
	}
}

// TestLeanRequest: the lean exchange takes a request whose body is of
// declared length up to maxReadAhead, without Upgrade or Expect; any
// other goes through the route's RoundTripper (which streams the body
// while it reads the reply: TestReplyBeforeRequestEnds).
func TestLeanRequest(t *testing.T) {
	for _, c := range []struct {
		name   string
		length int
		header string
		want   bool
	}{
		{"no body", 0, "", true},
		{"a GET's: no length, not chunked", -2, "", true},
		{"a chat request", 512, "", true},
		{"at the bound", maxReadAhead, "", true},
		{"past the bound", maxReadAhead + 1, "", false},
		{"chunked", -1, "", false},
		{"Expect", 512, "Expect", false},
		{"Upgrade", 0, "Upgrade", false},
	} {
		var ctx fasthttp.RequestCtx
		ctx.Request.Header.SetMethod(http.MethodPost)
		ctx.Request.Header.SetContentLength(c.length)
		if c.header != "" {
			ctx.Request.Header.Set(c.header, "100-continue")
		}
		if got := leanRequest(&ctx); got != c.want {
			t.Errorf("%s: taken %v, want %v", c.name, got, c.want)
		}
	}
}

// TestNothingAdded: a request without Content-Type or User-Agent reaches
// the upstream without them (fasthttp would add a default Content-Type,
// Go's client a User-Agent), header names keep the case they were sent
// in, and the reply gets no Server, Date or Content-Type of the proxy's.
func TestNothingAdded(t *testing.T) {
	got := make(chan string, 1)
	up := rawServer(t, func(c net.Conn, br *bufio.Reader) {
		var head strings.Builder
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			head.WriteString(line)
			if line == "\r\n" {
				break
			}
		}
		io.CopyN(io.Discard, br, 2)
		got <- head.String()
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
	})
	base, _, _ := startProxy(t, &Config{Routes: []Route{testRoute("free", up, validate.Rules{})}}, nil)
	conn, err := net.Dial("tcp", strings.TrimPrefix(base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	fmt.Fprint(conn, "POST /free/v1/embeddings HTTP/1.1\r\nHost: proxy\r\nx-trace-ID: abc\r\nContent-Length: 2\r\n\r\n{}")
	conn.SetReadDeadline(time.Now().Add(testLimits.TotalTimeout)) // the bound of a failure
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	head := <-got
	for _, h := range []string{"Content-Type", "User-Agent"} {
		if strings.Contains(strings.ToLower(head), strings.ToLower(h)+":") {
			t.Errorf("the proxy added %s:\n%s", h, head)
		}
	}
	if !strings.Contains(head, "\r\nx-trace-ID: abc\r\n") {
		t.Errorf("a header's name lost its case:\n%s", head)
	}
	for _, h := range []string{"Server", "Date", "Content-Type"} {
		if v := resp.Header.Get(h); v != "" {
			t.Errorf("the reply got %s: %q", h, v)
		}
	}
}

// TestHeadPassesItsLength: the reply to a HEAD has no body and keeps the
// upstream's Content-Length, on both of the front's upstream paths.
func TestHeadPassesItsLength(t *testing.T) {
	up, _ := echoUpstream(t)
	direct, err := http.Head(up + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	direct.Body.Close()
	for _, lean := range []bool{true, false} {
		rt := testRoute("free", up, validate.Rules{})
		if !lean {
			rt.HTTPConfig.HTTPHeaders = &commoncfg.Headers{Headers: map[string]commoncfg.Header{"X-Team": {Values: []string{"search"}}}}
		}
		base, _, _ := startProxy(t, &Config{Routes: []Route{rt}}, nil)
		resp, err := http.Head(base + "/free/v1/models")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || resp.ContentLength != direct.ContentLength || resp.ContentLength <= 0 {
			t.Errorf("lean %v: HEAD through the proxy: %d, length %d; direct: length %d", lean, resp.StatusCode, resp.ContentLength, direct.ContentLength)
		}
	}
}
