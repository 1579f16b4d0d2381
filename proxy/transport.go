package proxy

import (
	"net"
	"net/http"
	"time"

	commoncfg "github.com/prometheus/common/config"
)

// upstreamTransport is the RoundTripper for a route's http_config:
// prometheus/common's, built by NewRoundTripperFromConfig, except for a
// configuration that needs none of what that builds around its
// http.Transport (no credentials, no extra headers, no TLS files or
// references to reload). That one gets the same http.Transport, with the
// same settings, built here without go-conntrack's dial wrapper, which
// prometheus/common always adds with tracing on: it keeps a
// golang.org/x/net/trace event log (100 entries reserved, 6.5 KiB) for
// every upstream connection in a process-wide list, for a /debug/events
// page the proxy never serves, plus dialer counters on the default
// registry it never exports. With streams, each open stream holds its
// own upstream connection, so that was a tenth of an open stream's
// memory under make bench-proxy.
//
// A route without a proxy gets h1 too, its own pool for the front's lean
// exchange (h1.go), beside the same http.Transport for what that does
// not take.
func upstreamTransport(cfg commoncfg.HTTPClientConfig, name string) (_ http.RoundTripper, h1 *h1Transport, _ error) {
	if !plainHTTPConfig(cfg) {
		rt, err := commoncfg.NewRoundTripperFromConfig(cfg, name)
		return rt, nil, err
	}
	tlsConfig, err := commoncfg.NewTLSConfig(&cfg.TLSConfig)
	if err != nil {
		return nil, nil, err
	}
	// As prometheus/common v0.73's NewRoundTripperFromConfig sets it up.
	t := &http.Transport{
		Proxy:                 cfg.Proxy(),
		ProxyConnectHeader:    cfg.GetProxyConnectHeader(),
		MaxIdleConns:          20000,
		MaxIdleConnsPerHost:   1000,
		TLSClientConfig:       tlsConfig,
		DisableCompression:    true,
		IdleConnTimeout:       5 * time.Minute,
		TLSHandshakeTimeout:   10 * time.Second,
		ExpectContinueTimeout: 1 * time.Second,
		DialContext:           (&net.Dialer{}).DialContext,
	}
	if cfg.EnableHTTP2 {
		t.Protocols = &http.Protocols{}
		t.Protocols.SetHTTP1(true)
		t.Protocols.SetHTTP2(true)
		t.HTTP2 = &http.HTTP2Config{SendPingTimeout: time.Minute}
	}
	if t.Proxy == nil {
		// No proxy: HTTP/1.1 exchanges on the caller's goroutine, for
		// http:// upstreams and, without HTTP/2, https:// ones.
		return t, newH1Transport(t, !cfg.EnableHTTP2), nil
	}
	return t, nil, nil
}

// plainHTTPConfig reports whether cfg asks for nothing but an
// http.Transport: TLS settings given inline or not at all, a proxy, HTTP/2.
func plainHTTPConfig(cfg commoncfg.HTTPClientConfig) bool {
	tc := cfg.TLSConfig
	return cfg.BasicAuth == nil && cfg.Authorization == nil && cfg.OAuth2 == nil &&
		cfg.BearerToken == "" && cfg.BearerTokenFile == "" && cfg.HTTPHeaders == nil &&
		tc.CAFile == "" && tc.CertFile == "" && tc.KeyFile == "" &&
		tc.CARef == "" && tc.CertRef == "" && tc.KeyRef == ""
}
