package main

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/runner"
	"github.com/hermes-failover/hermes/web"
)

// coreBackend applies ctl's commands with the core's own rules
// (evaluator.Apply) on the shipped policy.
type coreBackend struct {
	backend
	p  *evaluator.Policy
	mu sync.Mutex
	s  evaluator.State
}

func (b *coreBackend) Submit(_ context.Context, cmd evaluator.Command) (runner.CommandResult, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	next, evs, err := evaluator.Apply(b.p, b.s, cmd, time.Unix(1000, 0))
	if err != nil {
		return runner.CommandResult{}, err
	}
	b.s = next
	return runner.CommandResult{Applied: true, Tick: time.Unix(1005, 0), Events: evs}, nil
}

// TestCtlPauseOverAPin: `ctl pause` over a pin fails naming the pin and
// --replace, and keeps the pin; with --replace it pauses. A mistyped
// service or route in `ctl pin` lists the valid names.
func TestCtlPauseOverAPin(t *testing.T) {
	b := &coreBackend{p: testenv.DefaultPolicy(t)}
	srv := httptest.NewServer(web.Handler(web.Options{Loop: b, Gatherer: prometheus.NewRegistry(), EnableAdminAPI: true,
		Now: func() time.Time { return time.Unix(1000, 0) }}))
	t.Cleanup(srv.Close)
	ctl := func(args ...string) (int, string) {
		code, out, errb := hermes(t, append([]string{"ctl", "--url", srv.URL}, args...)...)
		return code, out + errb
	}
	if code, out := ctl("pin", "chat", "paid-premium", "--reason", "launch", "--by", "alice", "--for", "2h"); code != 0 {
		t.Fatalf("pin: %d %s", code, out)
	}
	code, out := ctl("pause", "chat", "--reason", "freeze")
	if code != 1 || !strings.Contains(out, `hermes ctl pause: POST /api/v1/admin/overrides: service "chat" is pinned to "paid-premium" by alice ("launch", expires 1970-01-01T02:16:40Z)`) ||
		!strings.Contains(out, "hermes ctl pause --replace") {
		t.Errorf("pause over a pin: exit %d %s", code, out)
	}
	if o := b.s.Overrides["chat"]; o.Kind != "pin" {
		t.Errorf("the refused pause changed the override: %+v", o)
	}
	if code, out := ctl("pause", "chat", "--reason", "freeze", "--replace"); code != 0 || b.s.Overrides["chat"].Kind != "pause" {
		t.Errorf("pause --replace: exit %d %s, override %+v", code, out, b.s.Overrides["chat"])
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
