package main

import (
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules"
	"github.com/hermes-failover/hermes/runner"
	"github.com/hermes-failover/hermes/runner/auditlog"
	"github.com/hermes-failover/hermes/web"
)

// TestCtlDrill sends drills through the real client and admin API: what
// the flags ask for reaches the backend; usage errors exit 2 before
// anything is sent.
func TestCtlDrill(t *testing.T) {
	b, url := serveBackend(t, "")
	ctl := func(args ...string) (int, string) {
		code, out, errb := hermes(t, append([]string{"ctl", "--url", url, "drill"}, args...)...)
		return code, out + errb
	}
	if code, out := ctl("free", "--set", "quota_remaining=0.02", "--set", "error_body_ratio=0.4", "--for", "10m", "--reason", "game day", "--by", "alice", "--dry-run"); code != 0 || !strings.Contains(out, "drill: done at the tick of") {
		t.Errorf("drill: exit %d %s", code, out)
	}
	if code, out := ctl("free", "--stop", "--reason", "enough"); code != 0 {
		t.Errorf("drill --stop: exit %d %s", code, out)
	}
	want := []string{"drill free error_body_ratio=0.4,quota_remaining=0.02 10m0s dry-run=true game day alice", "end-drill free enough "}
	if strings.Join(b.calls, "|") != strings.Join(want, "|") {
		t.Errorf("calls %q, want %q", b.calls, want)
	}
	b.calls = nil
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"free", "--set", "quota_remaining=0.02", "--reason", "x"}, "--for is required"},
		{[]string{"free", "--for", "10m", "--reason", "x"}, "--set SIGNAL=VALUE is required"},
		{[]string{"free", "--set", "quota_remaining=0.02", "--for", "10m"}, "--reason is required"},
		{[]string{"free", "--set", "quota_remaining", "--for", "10m", "--reason", "x"}, "want SIGNAL=VALUE"},
		{[]string{"free", "--set", "quota_remaining=lots", "--for", "10m", "--reason", "x"}, `"lots" is not a finite number`},
		{[]string{"free", "--set", "quota_remaining=0.1", "--set", "quota_remaining=0.2", "--for", "10m", "--reason", "x"}, "quota_remaining is set twice"},
		{[]string{"free", "--stop", "--set", "quota_remaining=0.1", "--reason", "x"}, "--stop takes no --set"},
		{[]string{"--set", "quota_remaining=0.02", "--for", "10m", "--reason", "x"}, "want 1 argument(s), got 0"},
	} {
		if code, out := ctl(c.args...); code != 2 || !strings.Contains(out, c.want) {
			t.Errorf("drill %q: exit %d, want 2 and %q:\n%s", c.args, code, c.want, out)
		}
	}
	if len(b.calls) != 0 {
		t.Errorf("usage errors reached the backend: %q", b.calls)
	}
}

// TestCtlDrillRefusedByTheRunner sends drills the core refuses to a real
// runner behind the real admin API: each exits 1 with the core's reason.
func TestCtlDrillRefusedByTheRunner(t *testing.T) {
	cfg := filepath.Join(t.TempDir(), "hermes.yaml")
	if err := os.WriteFile(cfg, rules.DefaultYAML, 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := runner.New(runner.Options{ConfigPath: cfg, Registerer: prometheus.NewRegistry()})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(web.Handler(web.Options{Loop: web.Live(r), Gatherer: prometheus.NewRegistry(), EnableAdminAPI: true}))
	t.Cleanup(srv.Close)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"nowhere", "--set", "quota_remaining=0.02"}, `drill: unknown route "nowhere" (routes [free paid-standard paid-premium])`},
		{[]string{"free", "--set", "no_such_signal=1"}, `drill: unknown signal "no_such_signal"`},
		{[]string{"free", "--set", "quota_remaining=0.02"}, `service "chat" has no split yet; drill after the first tick`},
		{[]string{"free", "--stop"}, `end-drill: route "free" has no drill`},
	} {
		args := append([]string{"ctl", "--url", srv.URL, "drill", "--reason", "x"}, c.args...)
		if !strings.Contains(strings.Join(c.args, " "), "--stop") {
			args = append(args, "--for", "10m")
		}
		if code, out, errb := hermes(t, args...); code != 1 || !strings.Contains(errb, c.want) {
			t.Errorf("drill %q: exit %d, want 1 and %q; stdout %q stderr %q", c.args, code, c.want, out, errb)
		}
	}
	// Closed by default: without --web.enable-admin-api nothing is queued.
	closed := httptest.NewServer(web.Handler(web.Options{Loop: web.Live(r), Gatherer: prometheus.NewRegistry()}))
	t.Cleanup(closed.Close)
	if code, _, errb := hermes(t, "ctl", "--url", closed.URL, "drill", "free", "--set", "quota_remaining=0.02", "--for", "10m", "--reason", "x"); code != 1 || !strings.Contains(errb, "--web.enable-admin-api") {
		t.Errorf("drill with the admin API off: exit %d %s", code, errb)
	}
}

// TestCtlDrills writes the audit log of three drills run through the core
// (two of one kind, one a dry run) with the runner's audit writer, among
// the other events, and checks the table and the medians ctl drills
// prints from it.
func TestCtlDrills(t *testing.T) {
	p := testenv.DefaultPolicy(t)
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	audit := auditlog.New(f)
	now := time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC)
	var s evaluator.State
	delays := map[string][]time.Duration{} // route/phase → delay, from the events
	run := func(d time.Duration, cmds ...evaluator.Command) {
		for end := now.Add(d); now.Before(end); {
			now = now.Add(15 * time.Second)
			var evs []evaluator.Event
			s, evs = evaluator.Step(p, s, evaluator.Input{Snapshot: testenv.Healthy(p, now), Commands: cmds}, now)
			cmds = nil
			for _, e := range evs {
				if e.Type == evaluator.EventCommand {
					t.Fatalf("command rejected: %v", e.Reasons)
				}
				if e.Type == evaluator.EventDrill {
					delays[e.Route+"/"+e.State] = append(delays[e.Route+"/"+e.State], e.Time.Sub(e.Drill.Injected))
				}
				audit.Write(e)
			}
		}
	}
	drill := func(route, signal string, v float64, dry bool) evaluator.Command {
		return evaluator.Command{Kind: evaluator.CommandDrill, Route: route, Signals: map[string]float64{signal: v}, DryRun: dry,
			Reason: "game day", By: "alice", Expires: now.Add(15*time.Second + 10*time.Minute)}
	}
	run(15 * time.Second)
	run(15*time.Minute, drill("free", "error_body_ratio", 0.4, false))
	run(15*time.Minute, drill("paid-standard", "error_body_ratio", 0.4, false))
	run(15*time.Minute, drill("paid-premium", "quota_remaining", 0.01, true))
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path+".txt", []byte("not json, but about a \"drill\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	code, out, errb := hermes(t, "ctl", "drills", "--audit.file", path)
	if code != 0 {
		t.Fatalf("ctl drills: exit %d %s", code, errb)
	}
	moveFree, moveStd := delays["free/moved"][0], delays["paid-standard/moved"][0]
	for _, want := range []string{
		"ROUTE          KIND                  START                 DETECTION  FIRST MOVE  FAILOVER  DRY RUN  BY     END\n",
		fmt.Sprintf("free           error_body_ratio=0.4  2026-12-01T06:00:30Z  %-9s  %-10s  %-8s  no       alice  expired\n",
			delays["free/detected"][0], moveFree, delays["free/failed_over"][0]),
		// Free and paid-standard are failed over: paid-premium carries all.
		"paid-premium   quota_remaining=0.01  2026-12-01T06:30:30Z  0s         0s          0s        yes      alice  expired\n",
		"median delay from injection, per kind\n",
		fmt.Sprintf("error_body_ratio=0.4  2       %-9s  %-10s  ", delays["free/detected"][0], (moveFree+moveStd)/2),
	} {
		if !strings.Contains(out, want) {
			t.Errorf("ctl drills output lacks %q:\n%s", want, out)
		}
	}
	if len(delays["free/failed_over"]) != 1 || len(delays["paid-standard/failed_over"]) != 1 {
		t.Errorf("the error drills did not both fail over: %v", delays)
	}

	if code, _, errb := hermes(t, "ctl", "drills", "--audit.file", path+".txt"); code != 1 || !strings.Contains(errb, "line 1:") {
		t.Errorf("a line that is not JSON: exit %d %s", code, errb)
	}
	if code, _, errb := hermes(t, "ctl", "drills"); code != 2 || !strings.Contains(errb, "--audit.file is required") {
		t.Errorf("no --audit.file: exit %d %s", code, errb)
	}
}

func TestMedianText(t *testing.T) {
	m := time.Minute
	for _, c := range []struct {
		ds   []time.Duration
		n    int
		want string
	}{
		{nil, 2, "-"},
		{[]time.Duration{3 * m}, 1, "3m0s"},
		{[]time.Duration{3 * m, m}, 2, "2m0s"},
		{[]time.Duration{10 * m, m, 2 * m}, 3, "2m0s"},
		{[]time.Duration{10 * m, m}, 3, "5m30s (2 of 3)"},
	} {
		if got := medianText(c.ds, c.n); got != c.want {
			t.Errorf("medianText(%v, %d) = %q, want %q", c.ds, c.n, got, c.want)
		}
	}
}
