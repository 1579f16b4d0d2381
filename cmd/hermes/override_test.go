package main

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/web"
	"github.com/hermes-failover/hermes/web/api"
	"github.com/hermes-failover/hermes/web/webtest"
)

// ctlOnCore serves the admin API over a loop that applies commands with
// the core's own rules on the shipped policy, and returns the loop and a
// `hermes ctl` against it (exit code, stdout and stderr together).
func ctlOnCore(t *testing.T) (*webtest.CoreLoop, func(args ...string) (int, string)) {
	t.Helper()
	b := webtest.NewCoreLoop(testenv.DefaultPolicy(t))
	srv := httptest.NewServer(web.Handler(web.Options{Loop: b, Gatherer: prometheus.NewRegistry(), EnableAdminAPI: true,
		Now: func() time.Time { return webtest.Clock }}))
	t.Cleanup(srv.Close)
	return b, func(args ...string) (int, string) {
		code, out, errb := hermes(t, append([]string{"ctl", "--url", srv.URL}, args...)...)
		return code, out + errb
	}
}

// TestCtlPinOverAPause (issue 34): a pin never silently replaces a pause:
// it is refused, naming the pause, until --replace; and pin and pause say
// when they expire, or that they never do.
func TestCtlPinOverAPause(t *testing.T) {
	b, ctl := ctlOnCore(t)
	if code, out := ctl("pause", "chat", "--reason", "investigating", "--by", "bob"); code != 0 || !strings.Contains(out, "pause: done at the tick of 1970-01-01T00:16:40Z; no expiry: it holds until hermes ctl clear chat") {
		t.Fatalf("pause: %d %s", code, out)
	}
	code, out := ctl("pin", "chat", "paid-premium", "--reason", "launch", "--for", "2h")
	if code != 1 || !strings.Contains(out, `service "chat" is paused by bob ("investigating", no expiry): a pin would replace the pause`) || !strings.Contains(out, "hermes ctl pin --replace") {
		t.Errorf("pin over a pause: %d %s, want it refused naming the pause and --replace", code, out)
	}
	if o := b.Override("chat"); o.Kind != "pause" {
		t.Errorf("after a refused pin the override is %+v", o)
	}
	if code, out := ctl("pin", "chat", "paid-premium", "--reason", "launch", "--for", "2h", "--replace"); code != 0 || !strings.Contains(out, "pin: done at the tick of 1970-01-01T00:16:40Z; expires 1970-01-01T02:16:40Z") {
		t.Errorf("pin --replace: %d %s", code, out)
	}
	if o := b.Override("chat"); o.Kind != "pin" || !o.Expires.Equal(time.Unix(1000, 0).Add(2*time.Hour)) {
		t.Errorf("after pin --replace the override is %+v", o)
	}
	// A pin over a pin replaces it: same kind, the operator's new word.
	if code, out := ctl("pin", "chat", "paid-standard", "--reason", "launch 2"); code != 0 {
		t.Errorf("pin over a pin: %d %s", code, out)
	}
}

// TestCtlStatusSaysARejectedReload: ctl status says, above its tables,
// that the last reload was rejected and which configuration still runs.
func TestCtlStatusSaysARejectedReload(t *testing.T) {
	b := &backend{}
	st := b.Status()
	st.LoadedAt = time.Unix(900, 0)
	st.ReloadFailure = &api.ReloadFailure{At: time.Unix(990, 0), Since: time.Unix(960, 0), Count: 2, Error: "hermes.yaml:3: levels out of order"}
	b.st = &st
	_, url := serve(t, b, "")
	code, out, errb := hermes(t, "ctl", "--url", url, "status")
	want := "reload rejected at 1970-01-01T00:16:30Z (2 since 1970-01-01T00:16:00Z): hermes.yaml:3: levels out of order; the configuration loaded at 1970-01-01T00:15:00Z keeps running\n"
	if code != 0 || !strings.Contains(out, want) {
		t.Errorf("ctl status: %d, lacks %q:\n%s%s", code, want, out, errb)
	}
}
