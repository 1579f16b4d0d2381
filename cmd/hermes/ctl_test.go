package main

import (
	"bytes"
	"context"
	"errors"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/web"
	"github.com/hermes-failover/hermes/web/api"
)

// backend is a web.Backend recording admin calls; the HTTP server and the
// command-line client in between are the real ones.
type backend struct {
	calls []string
}

func (b *backend) Ready() bool { return true }
func (b *backend) Status() api.Status {
	return api.Status{Ready: true, LastTick: time.Unix(1000, 0), Services: []api.Service{{
		Name: "chat", Weights: map[string]int{"free": 0, "paid-standard": 100, "paid-premium": 0},
		Routes: []api.Route{
			{Name: "free", Score: 20, Level: "manual", Since: time.Unix(900, 0), Traffic: 0, Missing: []string{"p99_ratio"},
				Contributions: []evaluator.Contribution{
					{Signal: "soft_fail_ratio", Value: 0.4, StatusText: "ok", Penalty: 100, CapsAt: -1},
					{Signal: "p99_ratio", Value: math.NaN(), Status: evaluator.StatusMissing, StatusText: "missing", Reason: "no data", CapsAt: -1},
				}},
			{Name: "paid-standard", Score: 100, Level: "normal", Traffic: 100},
		}}},
		Alerts: []api.Alert{{Name: "HermesRouteManual", Tier: "A", State: "firing", Service: "chat", Route: "free", ActiveAt: time.Unix(950, 0)}},
	}
}
func (b *backend) Reload(context.Context) error { return nil }
func (b *backend) Submit(_ context.Context, cmd evaluator.Command) (api.CommandResult, error) {
	res := api.CommandResult{Applied: true, Tick: time.Unix(1005, 0)}
	switch cmd.Kind {
	case evaluator.CommandRelease:
		if cmd.Route != "free" {
			return res, errors.New(`route "` + cmd.Route + `" is normal, not manual`)
		}
		b.calls = append(b.calls, "release "+cmd.Route+" "+cmd.Reason+" "+cmd.By)
	case evaluator.CommandPin, evaluator.CommandPause:
		// The handler's clock reads time.Unix(1000, 0).
		b.calls = append(b.calls, "set "+cmd.Service+" "+string(cmd.Kind)+" "+cmd.Route+" "+cmd.Reason+" "+cmd.Expires.Sub(time.Unix(1000, 0)).String())
	case evaluator.CommandClear:
		b.calls = append(b.calls, "clear "+cmd.Service+" "+cmd.Reason)
	}
	return res, nil
}

func serveBackend(t *testing.T, token string) (*backend, string) {
	b := &backend{}
	srv := httptest.NewServer(web.Handler(web.Options{Backend: b, Gatherer: prometheus.NewRegistry(), AdminToken: token, EnableAdminAPI: true,
		Now: func() time.Time { return time.Unix(1000, 0) }}))
	t.Cleanup(srv.Close)
	return b, srv.URL
}

func TestExplain(t *testing.T) {
	_, url := serveBackend(t, "")
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"explain", "--url", url, "--route", "free"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, want := range []string{"route free of service chat: manual", "score 20.0", "hermes ctl release free", "level held: no data for [p99_ratio]",
		"soft_fail_ratio", "-100.0 points", "p99_ratio", "(no data)", "alert HermesRouteManual [A] firing"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("explain output lacks %q:\n%s", want, out.String())
		}
	}
	out.Reset()
	errb.Reset()
	if code := run(context.Background(), []string{"explain", "--url", url, "--route", "nope"}, &out, &errb); code != 1 {
		t.Errorf("unknown route: exit %d", code)
	}
}

func TestCtl(t *testing.T) {
	b, url := serveBackend(t, "tok")
	token := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(token, []byte("tok\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	ctl := func(args ...string) (int, string) {
		var out, errb bytes.Buffer
		code := run(context.Background(), append([]string{"ctl", "--url", url, "--token-file", token}, args...), &out, &errb)
		return code, out.String() + errb.String()
	}
	if code, out := ctl("release", "free", "--reason", "fixed upstream", "--by", "alice"); code != 0 {
		t.Fatalf("release: %d %s", code, out)
	}
	if code, out := ctl("pin", "chat", "paid-premium", "--reason", "launch", "--for", "2h"); code != 0 {
		t.Fatalf("pin: %d %s", code, out)
	}
	if code, out := ctl("clear", "chat", "--reason", "done"); code != 0 {
		t.Fatalf("clear: %d %s", code, out)
	}
	want := []string{"release free fixed upstream alice", "set chat pin paid-premium launch 2h0m0s", "clear chat done"}
	if strings.Join(b.calls, "|") != strings.Join(want, "|") {
		t.Errorf("calls %q, want %q", b.calls, want)
	}
	if code, out := ctl("release", "paid-standard", "--reason", "x"); code != 1 || !strings.Contains(out, "not manual") {
		t.Errorf("release of a normal route: %d %s", code, out)
	}
	if code, _ := ctl("pause", "chat"); code != 2 {
		t.Errorf("pause without a reason: exit %d, want 2", code)
	}
	if code, out := ctl("status"); code != 0 || !strings.Contains(out, "free") {
		t.Errorf("status: %d %s", code, out)
	}
	var out, errb bytes.Buffer
	if code := run(context.Background(), []string{"ctl", "--url", url, "release", "free", "--reason", "x"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "admin token required") {
		t.Errorf("without the token: %d %s", code, errb.String())
	}
}
