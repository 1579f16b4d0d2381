package config

import (
	"net/http"
	"strings"

	commoncfg "github.com/prometheus/common/config"
)

// NewRoundTripper builds the round tripper of an http_config block with
// prometheus/common (name labels its connection metrics), such that a
// request a redirect took to another host carries none of the block's
// http_headers nor its credentials (basic_auth, authorization, bearer
// token, oauth2).
//
// prometheus/common's round trippers add the configured headers and
// credentials to every request they send, redirected ones included. On a
// redirect to another host it strips only the headers net/http strips
// (Authorization, cookies; sensitiveHeadersStripRT, as of v0.73), and only
// when http_headers is set: an X-Api-Key or X-Scope-OrgID header of
// http_headers went to the other host. So a request
// whose redirects left the first request's host (exact host name, any
// port: 127.0.0.1 and localhost differ) goes through a second round
// tripper, built from the block without headers and credentials; TLS and
// proxy settings stay.
func NewRoundTripper(hc commoncfg.HTTPClientConfig, name string, opts ...commoncfg.HTTPClientOption) (http.RoundTripper, error) {
	full, err := commoncfg.NewRoundTripperFromConfig(hc, name, opts...)
	if err != nil {
		return nil, err
	}
	bare := hc
	bare.HTTPHeaders = nil
	bare.BasicAuth = nil
	bare.Authorization = nil
	bare.BearerToken = ""
	bare.BearerTokenFile = ""
	bare.OAuth2 = nil
	other, err := commoncfg.NewRoundTripperFromConfig(bare, name, opts...)
	if err != nil {
		return nil, err
	}
	return &sameHostSecrets{full: full, bare: other}, nil
}

// NewClient is an http.Client over NewRoundTripper that follows redirects
// only when the block's follow_redirects says so, as
// prometheus/common's NewClientFromConfig.
func NewClient(hc commoncfg.HTTPClientConfig, name string, opts ...commoncfg.HTTPClientOption) (*http.Client, error) {
	rt, err := NewRoundTripper(hc, name, opts...)
	if err != nil {
		return nil, err
	}
	c := &http.Client{Transport: rt}
	if !hc.FollowRedirects {
		c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	}
	return c, nil
}

// sameHostSecrets sends requests that stayed on the first request's host
// through full, the others through bare (see NewRoundTripper).
type sameHostSecrets struct {
	full, bare http.RoundTripper
}

func (rt *sameHostSecrets) RoundTrip(req *http.Request) (*http.Response, error) {
	if leftHost(req) {
		return rt.bare.RoundTrip(req)
	}
	return rt.full.RoundTrip(req)
}

// CloseIdleConnections closes the idle connections of both round
// trippers (http.Client.CloseIdleConnections calls it).
func (rt *sameHostSecrets) CloseIdleConnections() {
	for _, r := range []http.RoundTripper{rt.full, rt.bare} {
		if c, ok := r.(interface{ CloseIdleConnections() }); ok {
			c.CloseIdleConnections()
		}
	}
}

// leftHost says whether req, or a request of the redirects that led to
// it, is for a host other than the first request's. net/http sets
// Response on a redirected request, its Request being the one before.
func leftHost(req *http.Request) bool {
	first := req
	for first.Response != nil && first.Response.Request != nil {
		first = first.Response.Request
	}
	host := first.URL.Hostname()
	for r := req; r != first; r = r.Response.Request {
		if !strings.EqualFold(r.URL.Hostname(), host) {
			return true
		}
	}
	return false
}
