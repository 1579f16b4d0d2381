package proxy

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"testing"
	"time"

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
