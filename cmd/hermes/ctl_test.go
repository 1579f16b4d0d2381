package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/runner"
	"github.com/hermes-failover/hermes/web"
	"github.com/hermes-failover/hermes/web/api"
)

// backend is a web.Loop recording admin calls; the HTTP server and the
// command-line client in between are the real ones.
type backend struct {
	calls []string
	// starting: no tick evaluated yet.
	starting bool
	// blind: ticks ran, but none had data from Prometheus.
	blind bool
	// st, when set, is the status.
	st *api.Status
	// queued: commands wait for a late tick (the loop answers before it).
	queued bool
}

func (b *backend) Ready() bool { return !b.starting && !b.blind }
func (b *backend) Status() api.Status {
	if b.st != nil {
		return *b.st
	}
	if b.blind {
		return api.Status{Ticked: true, LastTick: time.Unix(1000, 0), Interval: "15s", LoadedAt: time.Unix(990, 0),
			Problems: []string{"Prometheus unreachable: connection refused"}, Services: []api.Service{{Name: "chat", Weights: map[string]int{},
				Routes: []api.Route{{Name: "free", Level: "normal", Score: 100}}}}}
	}
	if b.starting {
		return api.Status{Interval: "15s", LoadedAt: time.Unix(990, 0), Services: []api.Service{{Name: "chat", Weights: map[string]int{},
			Routes: []api.Route{{Name: "free", Level: "unknown", Reasons: []string{"not evaluated yet"}}}}}}
	}
	return api.Status{Ready: true, LastTick: time.Unix(1000, 0), Interval: "15s", Services: []api.Service{{
		Name: "chat", Weights: map[string]int{"free": 0, "paid-standard": 100, "paid-premium": 0},
		Routes: []api.Route{
			{Name: "free", Score: 20, Level: "manual", Since: time.Unix(900, 0), Traffic: 0, Missing: []string{"p99_ratio"},
				Reasons:   []string{"soft_fail_ratio 0.4 (-100.0)"},
				Placement: []string{"score 20.0; moves down below 75 (warm, dwell 2m)", "manual since 1970-01-01T00:15:00Z: stays until an operator releases it"},
				Contributions: api.ContributionsOf([]evaluator.Contribution{
					{Signal: "soft_fail_ratio", Value: 0.4, Penalty: 100, CapsAt: -1},
					{Signal: "p99_ratio", Value: math.NaN(), Status: evaluator.StatusMissing, Reason: "no data", CapsAt: -1},
				})},
			{Name: "paid-standard", Score: 100, Level: "normal", Traffic: 100},
		}}},
		Alerts: []api.Alert{{Name: "HermesRouteManual", Tier: "A", State: "firing", Service: "chat", Route: "free", ActiveAt: time.Unix(950, 0)}},
		Drills: []evaluator.Drill{{Route: "paid-standard", Signals: map[string]float64{"quota_remaining": 0.02}, Reason: "game day", By: "alice",
			Since: time.Unix(985, 0), Until: time.Unix(1585, 0), DryRun: true}},
	}
}
func (b *backend) Reload(context.Context) error { return nil }

// History and Actuations: the fake loop has no past.
func (b *backend) History(context.Context, time.Time) ([]evaluator.Tick, []evaluator.Event, string) {
	return nil, nil, "memory"
}
func (b *backend) Actuations(context.Context, time.Time) ([]evaluator.Actuation, string) {
	return nil, "memory"
}
func (b *backend) Submit(_ context.Context, cmd evaluator.Command) (runner.CommandResult, error) {
	res := runner.CommandResult{Applied: true, Tick: time.Unix(1005, 0).UTC()}
	if b.queued {
		return runner.CommandResult{Applied: false, Tick: time.Unix(1020, 0).UTC()}, nil
	}
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
	case evaluator.CommandDrill:
		b.calls = append(b.calls, fmt.Sprintf("drill %s %s %s dry-run=%v %s %s", cmd.Route, evaluator.DrillKind(cmd.Signals),
			cmd.Expires.Sub(time.Unix(1000, 0)), cmd.DryRun, cmd.Reason, cmd.By))
	case evaluator.CommandEndDrill:
		b.calls = append(b.calls, "end-drill "+cmd.Route+" "+cmd.Reason+" "+cmd.By)
	}
	return res, nil
}

func serveBackend(t *testing.T, token string) (*backend, string) {
	return serve(t, &backend{}, token)
}

func serve(t *testing.T, b *backend, token string) (*backend, string) {
	srv := httptest.NewServer(web.Handler(web.Options{Loop: b, Gatherer: prometheus.NewRegistry(), AdminToken: token, EnableAdminAPI: true,
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
		"soft_fail_ratio", "-100.0 points", "p99_ratio", "(no data)", "alert HermesRouteManual [A] firing",
		"placed by:\n  score 20.0; moves down below 75 (warm, dwell 2m)\n  manual since 1970-01-01T00:15:00Z",
		"  SIGNAL           VALUE  STATUS   EFFECT\n", "  soft_fail_ratio  0.4    ok       -100.0 points\n"} {
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
	code, out := ctl("status")
	for _, want := range []string{"last tick 1970-01-01T00:16:40Z, every 15s\n", "\nservice chat\n",
		"ROUTE          LEVEL   SINCE                             SCORE  TRAFFIC  REASONS\n",
		"free           manual  1970-01-01T00:15:00Z (1m40s ago)  20.0   0%       soft_fail_ratio 0.4 (-100.0)\n",
		"paid-standard  normal  -                                 100.0  100%     -\n",
		"HermesRouteManual  A     firing  chat     free   1970-01-01T00:15:50Z (50s ago)\n",
		"paid-standard  quota_remaining=0.02  1970-01-01T00:16:25Z (15s ago)  1970-01-01T00:26:25Z  true     alice  game day\n"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("status: exit %d, output lacks %q:\n%s", code, want, out)
		}
	}
	if strings.Contains(out, "map[") {
		t.Errorf("status prints a Go map:\n%s", out)
	}
	if code, _, errb := hermes(t, "ctl", "--url", url, "release", "free", "--reason", "x"); code != 1 || !strings.Contains(errb, "admin token required") {
		t.Errorf("without the token: %d %s", code, errb)
	}
}

// TestNotReady: before the first tick, status and explain say so and fail
// instead of printing placeholder scores.
func TestNotReady(t *testing.T) {
	_, url := serve(t, &backend{starting: true}, "")
	for _, args := range [][]string{{"ctl", "--url", url, "status"}, {"explain", "--url", url, "--route", "free"}} {
		code, out, errb := hermes(t, args...)
		if code != 1 || out != "" || !strings.Contains(errb, "Hermes is not ready yet: no tick evaluated since it started (configuration loaded at 1970-01-01T00:16:30Z); try again after one evaluation interval 15s") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errb)
		}
	}
}

// TestNotReadyWhileBlind: ticks ran but every query failed; status and
// explain follow the runner's notion of ready, not the last tick alone.
func TestNotReadyWhileBlind(t *testing.T) {
	_, url := serve(t, &backend{blind: true}, "")
	for _, args := range [][]string{{"ctl", "--url", url, "status"}, {"explain", "--url", url, "--route", "free"}} {
		code, out, errb := hermes(t, args...)
		if code != 1 || out != "" || !strings.Contains(errb, "Hermes is not ready yet: restored, but the last tick had no data from Prometheus: Prometheus unreachable: connection refused;") ||
			strings.Contains(errb, "try again") {
			t.Errorf("%v: exit %d, stdout %q, stderr %q", args, code, out, errb)
		}
	}
}

// TestCtlWaitsAsLongAsTheServer: the admin API may hold a command for up
// to web.HandlerWait before answering that it is still queued; ctl must
// not give up first and report a failure for a command that then applies.
func TestCtlWaitsAsLongAsTheServer(t *testing.T) {
	c, err := newAPIClient("http://127.0.0.1:1", "")
	if err != nil {
		t.Fatal(err)
	}
	if c.http.Timeout <= web.HandlerWait {
		t.Errorf("ctl gives up after %v, the server may wait %v", c.http.Timeout, web.HandlerWait)
	}
}

// TestCtlSaysTheState: ctl status and explain print what the status API
// says in words: a failed-over route's failback, a carried score marked
// as such, a score never judged without a number.
func TestCtlSaysTheState(t *testing.T) {
	st := api.Status{Ready: true, LastTick: time.Unix(1000, 0), Interval: "15s",
		Problems: []string{"query failing: p99_ratio: bad_data (parse error)"},
		Services: []api.Service{{Name: "chat", Weights: map[string]int{"free": 0, "paid-standard": 100},
			Routes: []api.Route{
				{Name: "free", Score: 100, Level: "failover", Since: time.Unix(900, 0), ScoreState: api.ScoreJudged,
					State: []string{"failed over since 1970-01-01T00:15:00Z: recovering: the staged failback starts at 1970-01-01T00:25:00Z if the score stays ≥ 80", "idle: judged by its probes alone"}},
				{Name: "paid-standard", Score: 97.5, Level: "normal", Traffic: 100, ScoreState: api.ScoreCarried,
					State: []string{"held: query failing: bad_data (parse error); the score 97.5 is carried from the last tick with full data"}},
			}}}}
	_, url := serve(t, &backend{st: &st}, "")
	code, out, errb := hermes(t, "ctl", "--url", url, "status")
	for _, want := range []string{
		"query failing: p99_ratio: bad_data (parse error)\n",
		"100.0         0%       failed over since 1970-01-01T00:15:00Z: recovering: the staged failback starts at 1970-01-01T00:25:00Z if the score stays ≥ 80; idle: judged by its probes alone",
		"97.5 carried  100%     held: query failing: bad_data",
	} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("status: exit %d (%s), output lacks %q:\n%s", code, errb, want, out)
		}
	}
	code, out, errb = hermes(t, "explain", "--url", url, "--route", "paid-standard")
	for _, want := range []string{"score 97.5 carried", "query failing: p99_ratio", "held: query failing: bad_data"} {
		if code != 0 || !strings.Contains(out, want) {
			t.Errorf("explain: exit %d (%s), output lacks %q:\n%s", code, errb, want, out)
		}
	}
}
