package main

import (
	"strings"
	"testing"
)

// TestCtlPauseOverAPin: `ctl pause` over a pin fails naming the pin and
// --replace, and keeps the pin; with --replace it pauses. A mistyped
// service or route in `ctl pin` lists the valid names.
func TestCtlPauseOverAPin(t *testing.T) {
	b, ctl := ctlOnCore(t)
	if code, out := ctl("pin", "chat", "paid-premium", "--reason", "launch", "--by", "alice", "--for", "2h"); code != 0 {
		t.Fatalf("pin: %d %s", code, out)
	}
	code, out := ctl("pause", "chat", "--reason", "freeze")
	if code != 1 || !strings.Contains(out, `hermes ctl pause: POST /api/v1/admin/overrides: service "chat" is pinned to "paid-premium" by alice ("launch", expires 1970-01-01T02:16:40Z)`) ||
		!strings.Contains(out, "hermes ctl pause --replace") {
		t.Errorf("pause over a pin: exit %d %s", code, out)
	}
	if o := b.Override("chat"); o.Kind != "pin" {
		t.Errorf("the refused pause changed the override: %+v", o)
	}
	if code, out := ctl("pause", "chat", "--reason", "freeze", "--replace"); code != 0 || b.Override("chat").Kind != "pause" {
		t.Errorf("pause --replace: exit %d %s, override %+v", code, out, b.Override("chat"))
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"pin", "chta", "free", "--reason", "x"}, `unknown service "chta"; the services are "chat"`},
		{[]string{"pin", "chat", "fre", "--reason", "x"}, `route "fre" is not in service "chat"; its routes are "free", "paid-standard", "paid-premium"`},
	} {
		if code, out := ctl(tc.args...); code != 1 || !strings.Contains(out, tc.want) {
			t.Errorf("%q: exit %d %s, want %s", tc.args, code, out, tc.want)
		}
	}
}
