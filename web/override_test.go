package web

import (
	"strings"
	"testing"

	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/web/webtest"
)

// TestPauseOverAPinNeedsReplace: the admin API refuses a pause over a pin
// with what the pin is, and takes it with "replace": true.
func TestPauseOverAPinNeedsReplace(t *testing.T) {
	b := webtest.NewCoreLoop(testenv.DefaultPolicy(t))
	srv := serve(t, b, "")
	if code, body := do(t, "POST", srv.URL+"/api/v1/admin/overrides", `{"service":"chat","kind":"pin","route":"paid-premium","reason":"launch","expires_in":"2h"}`, ""); code != 200 {
		t.Fatalf("pin: %d %s", code, body)
	}
	code, body := do(t, "POST", srv.URL+"/api/v1/admin/overrides", `{"service":"chat","kind":"pause","reason":"freeze"}`, "")
	if code != 400 || !strings.Contains(body, `service \"chat\" is pinned to \"paid-premium\"`) || !strings.Contains(body, "--replace") {
		t.Errorf("pause over a pin: %d %s, want 400 naming the pin and --replace", code, body)
	}
	if o := b.Override("chat"); o.Kind != "pin" {
		t.Errorf("override after a refused pause: %+v", o)
	}
	if code, body := do(t, "POST", srv.URL+"/api/v1/admin/overrides", `{"service":"chat","kind":"pause","reason":"freeze","replace":true}`, ""); code != 200 {
		t.Errorf("pause with replace: %d %s", code, body)
	}
	if o := b.Override("chat"); o.Kind != "pause" || !o.Expires.IsZero() {
		t.Errorf("override after a pause with replace: %+v, want a pause without the pin's expiry", o)
	}
	code, body = do(t, "POST", srv.URL+"/api/v1/admin/overrides", `{"service":"chta","kind":"pin","route":"free","reason":"x"}`, "")
	if code != 400 || !strings.Contains(body, `the services are \"chat\"`) {
		t.Errorf("pin of a mistyped service: %d %s, want the valid names", code, body)
	}
}

// TestPinOverAPauseNeedsReplace: the admin API refuses a pin over a pause
// (it used to replace it silently, issue 34) with what the pause is, and
// takes it with "replace": true; the reply carries the pin's expiry.
func TestPinOverAPauseNeedsReplace(t *testing.T) {
	b := webtest.NewCoreLoop(testenv.DefaultPolicy(t))
	srv := serve(t, b, "")
	if code, body := do(t, "POST", srv.URL+"/api/v1/admin/overrides", `{"service":"chat","kind":"pause","reason":"freeze","expires_in":"30m"}`, ""); code != 200 {
		t.Fatalf("pause: %d %s", code, body)
	}
	code, body := do(t, "POST", srv.URL+"/api/v1/admin/overrides", `{"service":"chat","kind":"pin","route":"paid-premium","reason":"launch"}`, "")
	if code != 400 || !strings.Contains(body, `service \"chat\" is paused (\"freeze\", expires 1970-01-01T00:46:40Z)`) || !strings.Contains(body, "hermes ctl pin --replace") {
		t.Errorf("pin over a pause: %d %s, want 400 naming the pause and --replace", code, body)
	}
	if o := b.Override("chat"); o.Kind != "pause" {
		t.Errorf("override after a refused pin: %+v", o)
	}
	code, body = do(t, "POST", srv.URL+"/api/v1/admin/overrides", `{"service":"chat","kind":"pin","route":"paid-premium","reason":"launch","replace":true,"expires_in":"2h"}`, "")
	if code != 200 || !strings.Contains(body, `"expires": "1970-01-01T02:16:40Z"`) {
		t.Errorf("pin with replace: %d %s, want the reply to carry the expiry", code, body)
	}
	if o := b.Override("chat"); o.Kind != "pin" || o.Route != "paid-premium" {
		t.Errorf("override after a pin with replace: %+v", o)
	}
}
