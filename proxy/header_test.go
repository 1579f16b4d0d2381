package proxy

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/hermes-failover/hermes/gateway/validate"
)

// TestLongRequestHeaderPasses: a request header line of 6 KB, which
// nginx's default large_client_header_buffers (8 KiB a line) passes,
// reaches the upstream whole; a head past the proxy's 8 KiB buffer is
// answered 431 without calling the upstream.
func TestLongRequestHeaderPasses(t *testing.T) {
	up, seen := echoUpstream(t)
	base, _, _ := startProxy(t, &Config{Routes: []Route{testRoute("free", up, validate.Rules{})}}, nil)
	for _, c := range []struct {
		n    int
		want int
	}{{6000, http.StatusOK}, {12000, http.StatusRequestHeaderFieldsTooLarge}} {
		req, err := http.NewRequest(http.MethodPost, base+"/free/v1/chat/completions", strings.NewReader(`{"model":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		big := strings.Repeat("a", c.n)
		req.Header.Set("X-Big", big)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Fatalf("a %d-byte header: %s, want %d", c.n, resp.Status, c.want)
		}
		if c.want == http.StatusOK && seen.last().Header.Get("X-Big") != big {
			t.Errorf("a %d-byte header did not reach the upstream whole", c.n)
		}
	}
}

// TestLongReplyHeaderPasses: a provider's reply with 6 KB of headers
// (long rate-limit, policy and cookie headers) passes whole on the lean
// exchange; 12 KB is past its 8 KiB buffer and answered 502, as nginx
// answers an upstream's too big header.
func TestLongReplyHeaderPasses(t *testing.T) {
	for _, c := range []struct {
		n    int
		want int
	}{{6000, http.StatusOK}, {12000, http.StatusBadGateway}} {
		big := strings.Repeat("b", c.n)
		up := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.Copy(io.Discard, r.Body)
			w.Header().Set("X-Big", big)
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"Hello there."},"finish_reason":"stop"}]}`)
		}))
		base, _, _ := startProxy(t, &Config{Routes: []Route{testRoute("free", up, validate.Rules{})}}, nil)
		resp, err := http.Post(base+"/free/v1/chat/completions", "application/json", strings.NewReader(`{"model":"x"}`))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Fatalf("a reply with a %d-byte header: %s, want %d", c.n, resp.Status, c.want)
		}
		if c.want == http.StatusOK && resp.Header.Get("X-Big") != big {
			t.Errorf("a reply's %d-byte header did not reach the caller whole", c.n)
		}
	}
}
