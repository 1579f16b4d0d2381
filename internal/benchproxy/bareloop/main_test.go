package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/panjf2000/gnet/v2"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/hermes-failover/hermes/internal/benchproxy"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// TestPassesWhatTheUpstreamSends runs the proxy, judging, in front of the
// bench's upstream and checks that a plain reply and a stream reach the
// caller as a direct call gets them, one after the other on one kept
// connection, and that each reply is recorded ok.
func TestPassesWhatTheUpstreamSends(t *testing.T) {
	ul, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: &benchproxy.Upstream{Events: 5}, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ul) }()
	t.Cleanup(func() { _ = srv.Close() })
	direct := "http://" + ul.Addr().String()

	p, err := newProxy(direct, "/bench", true)
	if err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	done := make(chan error, 1)
	go func() { done <- p.serve(addr) }()
	select {
	case <-p.ready:
	case err := <-done:
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = gnet.Stop(context.Background(), "tcp://"+addr)
		<-done
	})

	client := &http.Client{Transport: &http.Transport{DisableCompression: true, MaxIdleConnsPerHost: 1}}
	sent := regexp.MustCompile(`"sent_ns":[0-9]+`) // the upstream's clock, different on each call
	call := func(base string, body []byte) string {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, base+"/v1/chat/completions", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(benchproxy.HeaderGap, "1ms")
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		got, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: status %d, %v", base, resp.StatusCode, err)
		}
		return sent.ReplaceAllString(string(got), "")
	}
	for range 3 {
		for _, body := range [][]byte{benchproxy.PlainRequest, benchproxy.StreamRequest} {
			want, got := call(direct, body), call("http://"+addr+"/bench", body)
			if got != want || len(want) == 0 {
				t.Fatalf("through the proxy:\n%q\ndirect:\n%q", got, want)
			}
		}
	}
	want := `
# HELP llm_gateway_requests_total Upstream LLM calls by route, HTTP code (or timeout, conn_error), verdict and soft-failure reason.
# TYPE llm_gateway_requests_total counter
llm_gateway_requests_total{code="200",reason="",route="bench",verdict="ok"} 6
`
	// The last reply is recorded once its last bytes are written.
	testenv.EventuallyDetail(t, 5*time.Second, "six replies recorded ok", func() (bool, string) {
		err := testutil.GatherAndCompare(p.reg, strings.NewReader(want), "llm_gateway_requests_total")
		return err == nil, fmt.Sprint(err)
	})
}

// TestChunksFindTheEnd feeds chunked bodies, each followed by the next
// reply's bytes, a byte at a time and whole, with extensions and
// trailers, and checks where the body ends and the data judged.
func TestChunksFindTheEnd(t *testing.T) {
	for _, tc := range []struct{ body, data string }{
		{"5\r\nhello\r\n0\r\n\r\n", "hello"},
		{"5;ext=1\r\nhello\r\na\r\n0123456789\r\n0\r\nTrailer: x\r\n\r\n", "hello0123456789"},
		{"0\r\n\r\n", ""},
	} {
		in := tc.body + "HTTP/1.1 200 OK\r\n"
		for _, step := range []int{1, len(in)} {
			c, j := &chunks{}, &collected{}
			used, done := 0, false
			for i := 0; i < len(in) && !done; i += step {
				var n int
				n, done = c.feed([]byte(in[i:min(i+step, len(in))]), j)
				used += n
			}
			if !done || used != len(tc.body) || j.String() != tc.data {
				t.Errorf("%q in steps of %d: done %v after %d bytes with data %q, want the end after %d with %q", tc.body, step, done, used, j.String(), len(tc.body), tc.data)
			}
		}
	}
}

type collected struct{ bytes.Buffer }

func (c *collected) Write(p []byte) { c.Buffer.Write(p) }

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
