package instrument_test

import (
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/gateway/instrument"
	"github.com/hermes-failover/hermes/gateway/validate"
	"github.com/hermes-failover/hermes/internal/faults"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// TestCompressedReplies: an upstream that compresses its JSON replies,
// as a provider behind Cloudflare does, is judged on what they decode
// to, through the Middleware of a gateway whose reverse proxy forwards
// the caller's Accept-Encoding (Go's client asks for gzip), and through
// the Transport of a gateway that asks for Brotli itself (Go's transport
// then leaves the body coded).
func TestCompressedReplies(t *testing.T) {
	srv := faults.Start(t)
	srv.Compress = true
	up, _ := url.Parse(srv.URL)
	reg := prometheus.NewRegistry()
	m := instrument.MustNewMetrics(reg)
	v := validate.MustNew(validate.Rules{})
	rp := httputil.NewSingleHostReverseProxy(up)
	rp.FlushInterval = -1
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gw := &http.Server{Handler: m.Middleware("mw", v, rp), ReadHeaderTimeout: 5 * time.Second}
	go gw.Serve(l)
	t.Cleanup(func() { gw.Close() })
	direct := &http.Client{Transport: m.Transport("tr", v, &http.Transport{})}

	for _, tt := range []struct {
		fault           faults.Fault
		code, v, reason string
	}{
		{faults.Healthy, "200", "ok", ""},
		{faults.ErrorInOK, "200", "soft_fail", "error_body"},
		{faults.ContextLength, "400", "rejected", "context_length"},
	} {
		for _, route := range []string{"mw", "tr"} {
			var req *http.Request
			if route == "mw" {
				req = chatRequest(t, "http://"+l.Addr().String()+"/"+string(tt.fault), false)
			} else {
				req = chatRequest(t, srv.URL+"/"+string(tt.fault), false)
				req.Header.Set("Accept-Encoding", "br")
			}
			client := http.DefaultClient
			if route == "tr" {
				client = direct
			}
			resp, err := client.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if coded := resp.Uncompressed || resp.Header.Get("Content-Encoding") == "br"; !coded {
				t.Errorf("%s %s: the reply was not compressed (%v)", route, tt.fault, resp.Header)
			}
			want := map[string]string{"route": route, "code": tt.code, "verdict": tt.v, "reason": tt.reason}
			testenv.EventuallyDetail(t, 5*time.Second, "the call recorded", func() (bool, string) {
				got := testenv.Metric(t, reg, "llm_gateway_requests_total", want)
				return got == 1, "llm_gateway_requests_total"
			})
		}
	}
}
