package web

import (
	"net/http"
	"strings"
	"testing"

	"github.com/hermes-failover/hermes/evaluator"
)

const pinBody = `{"service":"chat","kind":"pin","route":"paid-premium","reason":"launch"}`

func TestAdminAndLifecycleAreClosedByDefault(t *testing.T) {
	b := &fakeBackend{overrides: map[string]evaluator.Override{}}
	srv := serveOptions(t, Options{Loop: b})
	for _, c := range []struct{ method, path, body, flag string }{
		{"POST", "/-/reload", "", "--web.enable-lifecycle"},
		{"PUT", "/-/reload", "", "--web.enable-lifecycle"},
		{"POST", "/api/v1/admin/overrides", pinBody, "--web.enable-admin-api"},
		{"POST", "/api/v1/admin/release", `{"route":"free","reason":"fixed"}`, "--web.enable-admin-api"},
		{"DELETE", "/api/v1/admin/overrides/chat?reason=x", "", "--web.enable-admin-api"},
		{"POST", "/api/v1/admin/drills", `{"route":"free","signals":{"quota_remaining":0.02},"for":"10m","reason":"game day"}`, "--web.enable-admin-api"},
		{"DELETE", "/api/v1/admin/drills/free?reason=x", "", "--web.enable-admin-api"},
	} {
		code, body := do(t, c.method, srv.URL+c.path, c.body, "")
		if code != http.StatusForbidden || !strings.Contains(body, c.flag) {
			t.Errorf("%s %s with the API off: %d %s, want 403 naming %s", c.method, c.path, code, body, c.flag)
		}
	}
	if len(b.overrides) != 0 || len(b.released) != 0 || len(b.drills) != 0 {
		t.Errorf("a closed API changed something: %v %v %v", b.overrides, b.released, b.drills)
	}
	// Enabling one group leaves the other closed.
	srv = serveOptions(t, Options{Loop: b, EnableLifecycle: true})
	if code, _ := do(t, "POST", srv.URL+"/-/reload", "", ""); code != http.StatusOK {
		t.Errorf("reload with the lifecycle API on: %d", code)
	}
	if code, _ := do(t, "POST", srv.URL+"/api/v1/admin/overrides", pinBody, ""); code != http.StatusForbidden {
		t.Errorf("pin with only the lifecycle API on: %d", code)
	}
}

// TestAdminRefusesBrowserAttacks sends what a page on another origin can
// make a browser send: a form's text/plain body that parses as JSON, and
// cross-origin requests carrying Origin or Sec-Fetch-Site.
func TestAdminRefusesBrowserAttacks(t *testing.T) {
	b := &fakeBackend{overrides: map[string]evaluator.Override{}}
	srv := serve(t, b, "")
	req := func(method, path, body string, hdr ...string) *http.Request {
		r, err := http.NewRequest(method, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < len(hdr); i += 2 {
			r.Header.Set(hdr[i], hdr[i+1])
		}
		return r
	}
	host := strings.TrimPrefix(srv.URL, "http://")
	for _, c := range []struct {
		name string
		req  *http.Request
		code int
		want string
	}{
		{"a form's text/plain body", req("POST", "/api/v1/admin/overrides", pinBody, "Content-Type", "text/plain"), 415, "application/json"},
		{"no content type", req("POST", "/api/v1/admin/overrides", pinBody), 415, "application/json"},
		{"cross-site fetch", req("POST", "/api/v1/admin/overrides", pinBody, "Content-Type", "application/json", "Sec-Fetch-Site", "cross-site"), 403, "cross-origin"},
		{"same-site other port", req("POST", "/api/v1/admin/overrides", pinBody, "Content-Type", "application/json", "Sec-Fetch-Site", "same-site"), 403, "cross-origin"},
		{"foreign Origin", req("POST", "/api/v1/admin/overrides", pinBody, "Content-Type", "application/json", "Origin", "http://evil.example"), 403, "cross-origin"},
		{"foreign Origin on reload", req("POST", "/-/reload", "", "Origin", "http://evil.example"), 403, "cross-origin"},
		{"foreign Origin on clear", req("DELETE", "/api/v1/admin/overrides/chat?reason=x", "", "Origin", "http://evil.example"), 403, "cross-origin"},
	} {
		code, body := send(t, c.req, "")
		if code != c.code || !strings.Contains(body, c.want) {
			t.Errorf("%s: %d %s, want %d naming %q", c.name, code, body, c.code, c.want)
		}
	}
	if len(b.overrides) != 0 {
		t.Fatalf("a browser attack pinned: %v", b.overrides)
	}
	// The same request from the page Hermes serves, or from curl, passes.
	for _, hdr := range [][]string{
		{"Content-Type", "application/json; charset=utf-8", "Sec-Fetch-Site", "same-origin"},
		{"Content-Type", "application/json", "Origin", "http://" + host},
		{"Content-Type", "application/json"},
	} {
		if code, body := send(t, req("POST", "/api/v1/admin/overrides", pinBody, hdr...), ""); code != 200 {
			t.Errorf("same-origin pin %v: %d %s", hdr, code, body)
		}
	}
}
