package webhook

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/actuators/actuatortest"
)

// otherHost is a server on 127.0.0.1 that keeps the headers of every
// request it gets, and the URL of it by the name localhost: another host
// to net/http.
func otherHost(t *testing.T) (target string, got func() []http.Header) {
	var (
		mu   sync.Mutex
		seen []http.Header
	)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Clone())
		mu.Unlock()
	}))
	t.Cleanup(srv.Close)
	return strings.Replace(srv.URL, "127.0.0.1", "localhost", 1), func() []http.Header {
		mu.Lock()
		defer mu.Unlock()
		return seen
	}
}

// redirectingReceiver answers every request with code to target.
func redirectingReceiver(t *testing.T, code int, target string) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target+"/steal", code)
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// secretConfigs are webhook options with a secret in each place one can
// be configured: http_config's authorization, basic_auth and
// http_headers, and the webhook's own headers.
var secretConfigs = map[string]map[string]any{
	"authorization": {"authorization": map[string]any{"credentials": "leak-authorization"}},
	"basic_auth":    {"basic_auth": map[string]any{"username": "hermes", "password": "leak-basic-auth"}},
	"http_headers":  {"http_headers": map[string]any{"X-Api-Key": map[string]any{"secrets": []string{"leak-http-headers"}}}},
}

// leaks are the secrets of secretConfigs (basic_auth's as sent).
var leaks = []string{"leak-authorization", "aGVybWVzOmxlYWstYmFzaWMtYXV0aA==", "leak-http-headers", "leak-headers"}

// TestRedirectToAnotherHostCarriesNoSecrets: whatever the webhook's
// configuration holds (http_config credentials, http_config headers, the
// webhook's headers) and whether follow_redirects is on or off, a 307 or
// 308 from the receiver to another host (127.0.0.1 to localhost) fails the
// apply and the other host gets nothing.
func TestRedirectToAnotherHostCarriesNoSecrets(t *testing.T) {
	for name, hc := range secretConfigs {
		for _, follow := range []bool{true, false} {
			for _, code := range []int{http.StatusTemporaryRedirect, http.StatusPermanentRedirect} {
				t.Run(fmt.Sprintf("%s/follow_redirects=%v/%d", name, follow, code), func(t *testing.T) {
					target, got := otherHost(t)
					cfg := map[string]any{"follow_redirects": follow}
					for k, v := range hc {
						cfg[k] = v
					}
					a := newActuator(t, options(redirectingReceiver(t, code, target),
						"http_config", cfg, "headers", map[string]any{"X-Tenant-Key": "leak-headers"}))
					err := a.Apply(t.Context(), actuators.Filter(actuatortest.Shed(), []string{"chat"}))
					if err == nil {
						t.Fatal("Apply through a redirect to another host succeeded")
					}
					if follow && !strings.Contains(err.Error(), "another host") {
						t.Errorf("Apply: %v, want an error naming the other host", err)
					}
					if n := len(got()); n != 0 {
						t.Errorf("the other host got %d requests: %v", n, got())
					}
				})
			}
		}
	}
}

// TestClientTransportDropsSecretsOnAnotherHost: the webhook's transport
// itself (rules/config.NewRoundTripper, as for Prometheus and
// Alertmanager) sends a request that a redirect took to another host
// without http_config's credentials and headers, so that they stay home
// even through a client that follows every redirect: a second line
// behind checkRedirect. (prometheus/common's transport alone sends
// basic_auth, authorization and http_headers to any host.)
func TestClientTransportDropsSecretsOnAnotherHost(t *testing.T) {
	for name, hc := range secretConfigs {
		t.Run(name, func(t *testing.T) {
			target, got := otherHost(t)
			a := newActuator(t, options(redirectingReceiver(t, http.StatusTemporaryRedirect, target), "http_config", hc))
			follows := &http.Client{Transport: a.client.Transport} // no CheckRedirect: every redirect followed
			resp, err := follows.Get(a.cfg.URL)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			seen := got()
			if len(seen) != 1 {
				t.Fatalf("the other host got %d requests, want the one redirected", len(seen))
			}
			for k, vs := range seen[0] {
				for _, v := range vs {
					for _, leak := range leaks {
						if strings.Contains(v, leak) {
							t.Errorf("the other host got %s: %s", k, v)
						}
					}
				}
			}
		})
	}
}
