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

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
