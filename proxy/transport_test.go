package proxy

import (
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	commoncfg "github.com/prometheus/common/config"
)

// TestUpstreamTransport: a plain http_config gets an http.Transport of its
// own that keeps its proxy URL and its inline TLS settings (without a
// proxy, beside a pool for the lean HTTP/1.1 exchange, which https:// takes
// unless HTTP/2 is asked); one with credentials keeps prometheus/common's
// round tripper.
func TestUpstreamTransport(t *testing.T) {
	cfg, err := Load("testdata/proxy.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rt, h1, err := upstreamTransport(cfg.Routes[1].HTTPConfig, "paid")
	if err != nil {
		t.Fatal(err)
	}
	if h1 != nil {
		t.Error("a route with a proxy URL got a pool for the lean exchange")
	}
	tr, ok := rt.(*http.Transport)
	if !ok {
		t.Fatalf("a plain http_config got %T", rt)
	}
	u, err := tr.Proxy(httptest.NewRequest(http.MethodPost, "https://api.example/v1/chat/completions", nil))
	if err != nil || u == nil || u.Host != "egress.internal:3128" {
		t.Errorf("proxy for the upstream: %v, %v; want egress.internal:3128", u, err)
	}
	if tr.MaxIdleConnsPerHost != 1000 || !tr.DisableCompression {
		t.Errorf("settings differ from prometheus/common's: %+v", tr)
	}

	// Inline TLS settings: the upstream's certificate as the CA, through
	// net/http's Transport (HTTP/2 asked, the default) and through the
	// hand-rolled HTTP/1.1 exchange (enable_http2: false).
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	ca := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	for _, http2 := range []bool{true, false} {
		hc := commoncfg.DefaultHTTPClientConfig
		hc.EnableHTTP2 = http2
		hc.TLSConfig = commoncfg.TLSConfig{CA: ca, ServerName: "example.com"}
		rt, h, err := upstreamTransport(hc, "tls")
		if err != nil {
			t.Fatal(err)
		}
		if h == nil {
			t.Fatalf("inline TLS settings got no pool for the lean exchange, only %T", rt)
		}
		u, _ := url.Parse(srv.URL)
		if (newLean(h, u, Limits{}) != nil) == http2 {
			t.Errorf("enable_http2 %v: the lean exchange takes https:// %v", http2, !http2)
		}
		if !http2 {
			rt = leanRT{h}
		}
		resp, err := (&http.Client{Transport: rt}).Get(srv.URL)
		if err != nil {
			t.Fatalf("enable_http2 %v: the upstream's own CA refused: %v", http2, err)
		}
		if resp.TLS == nil {
			t.Errorf("enable_http2 %v: no TLS state on the reply", http2)
		}
		resp.Body.Close()
		h.CloseIdleConnections()
		hc.TLSConfig = commoncfg.TLSConfig{ServerName: "example.com"}
		rt, h, _ = upstreamTransport(hc, "tls")
		if !http2 {
			rt = leanRT{h}
		}
		if resp, err := (&http.Client{Transport: rt}).Get(srv.URL); err == nil {
			resp.Body.Close()
			t.Fatalf("enable_http2 %v: an unknown CA accepted", http2)
		}
	}

	hc := commoncfg.DefaultHTTPClientConfig
	hc.Authorization = &commoncfg.Authorization{Type: "Bearer", Credentials: "secret"}
	rt, h1, err = upstreamTransport(hc, "auth")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rt.(*http.Transport); ok || h1 != nil {
		t.Fatal("credentials dropped: a bare http.Transport")
	}
}
