package proxy

import (
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	commoncfg "github.com/prometheus/common/config"
)

// TestUpstreamTransport: a plain http_config gets an http.Transport of its
// own that keeps its proxy URL and its inline TLS settings; one with
// credentials keeps prometheus/common's round tripper.
func TestUpstreamTransport(t *testing.T) {
	cfg, err := Load("testdata/proxy.good.yaml")
	if err != nil {
		t.Fatal(err)
	}
	rt, err := upstreamTransport(cfg.Routes[1].HTTPConfig, "paid")
	if err != nil {
		t.Fatal(err)
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

	// Inline TLS settings: the upstream's certificate as the CA.
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, "ok") }))
	defer srv.Close()
	ca := string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}))
	hc := commoncfg.DefaultHTTPClientConfig
	hc.TLSConfig = commoncfg.TLSConfig{CA: ca, ServerName: "example.com"}
	rt, err = upstreamTransport(hc, "tls")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rt.(*http.Transport); !ok {
		t.Fatalf("inline TLS settings got %T", rt)
	}
	resp, err := (&http.Client{Transport: rt}).Get(srv.URL)
	if err != nil {
		t.Fatalf("the upstream's own CA refused: %v", err)
	}
	resp.Body.Close()
	hc.TLSConfig = commoncfg.TLSConfig{ServerName: "example.com"}
	rt, _ = upstreamTransport(hc, "tls")
	if resp, err := (&http.Client{Transport: rt}).Get(srv.URL); err == nil {
		resp.Body.Close()
		t.Fatal("an unknown CA accepted")
	}

	hc = commoncfg.DefaultHTTPClientConfig
	hc.Authorization = &commoncfg.Authorization{Type: "Bearer", Credentials: "secret"}
	rt, err = upstreamTransport(hc, "auth")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := rt.(*http.Transport); ok {
		t.Fatal("credentials dropped: a bare http.Transport")
	}
}
