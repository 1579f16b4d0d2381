package nginx

import (
	"context"
	"crypto/sha256"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/actuators/actuatortest"
	"github.com/hermes-failover/hermes/traffic"
)

func newActuator(t *testing.T, opts map[string]any) *Actuator {
	t.Helper()
	a, err := New(actuatortest.Settings(Kind, opts))
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	return a
}

// with returns opts plus upstreams and any extra keys.
func with(opts map[string]any, upstreams map[string]any, kv ...any) map[string]any {
	out := map[string]any{"upstreams": upstreams}
	for k, v := range opts {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i].(string)] = kv[i+1]
	}
	return out
}

// fileState identifies one version of a file: inode (a rename brings a
// new one), mtime and content.
type fileState struct {
	info fs.FileInfo
	sum  [sha256.Size]byte
}

func stat(path string) fileState {
	fi, err := os.Stat(path)
	if err != nil {
		return fileState{}
	}
	data, _ := os.ReadFile(path)
	return fileState{info: fi, sum: sha256.Sum256(data)}
}

func (s fileState) same(o fileState) bool {
	if s.info == nil || o.info == nil {
		return s.info == o.info
	}
	return os.SameFile(s.info, o.info) && s.info.ModTime().Equal(o.info.ModTime()) && s.sum == o.sum
}

// suiteSecret sits in the file Break writes; nginx's message about that
// file must not bring it into an error.
const suiteSecret = "hermes-test-secret-token"

func TestSuite(t *testing.T) {
	var (
		n        *testNginx
		paths    []string
		last     map[string]fileState
		reloads  int
		snapshot = func() map[string]fileState {
			m := map[string]fileState{}
			for _, p := range paths {
				m[p] = stat(p)
			}
			return m
		}
	)
	actuatortest.Run(t, actuatortest.Harness{
		New: func(t *testing.T) actuators.Actuator {
			n = startNginx(t)
			a := newActuator(t, with(n.options(), map[string]any{
				"chat": map[string]any{
					"free": []any{"127.0.0.1:8001"},
					"paid": []any{"127.0.0.1:8002 max_fails=3 fail_timeout=5s"},
				},
				"embed": map[string]any{"embed-free": []any{"127.0.0.1:8003", "127.0.0.1:8004"}},
			}))
			paths = []string{a.IncludePath("chat"), a.IncludePath("embed")}
			last, reloads = snapshot(), n.reloads()
			return a
		},
		// Changed: an include file was replaced, or nginx reloaded. A
		// replaced file must come with a reload, which is asynchronous:
		// wait for the master to log it.
		Changed: func(t *testing.T) bool {
			now := snapshot()
			files := false
			for _, p := range paths {
				if !now[p].same(last[p]) {
					files = true
				}
			}
			if files && !n.waitReloads(reloads+1) {
				t.Errorf("include files changed but nginx did not reload (%d reloads)", n.reloads())
			}
			r := n.reloads()
			changed := files || r != reloads
			last, reloads = now, r
			return changed
		},
		// Break makes `nginx -t` fail through another included file; it
		// holds a secret that must not leak into errors.
		Break: func(t *testing.T) {
			bad := fmt.Sprintf("proxy_set_header X-Api-Key %q unexpected;\n", suiteSecret)
			if err := os.WriteFile(filepath.Join(n.dir, "extra", "broken.conf"), []byte(bad), 0o644); err != nil {
				t.Fatal(err)
			}
		},
		Repair: func(t *testing.T) {
			if err := os.Remove(filepath.Join(n.dir, "extra", "broken.conf")); err != nil {
				t.Fatal(err)
			}
		},
		Secrets: []string{suiteSecret},
	})
}

// split is a chat split over the routes free, paid and spare.
func split(free, paid, spare int) actuators.Splits {
	return actuators.Splits{"chat": {
		Weights:        map[string]int{"free": free, "paid": paid, "spare": spare},
		RetriesEnabled: true,
	}}
}

// chatUpstreams points free and paid at one server each and spare at two,
// each answering its route's name.
func chatUpstreams(t *testing.T, spareParam string) map[string]any {
	return map[string]any{"chat": map[string]any{
		"free":  []any{routeServer(t, "free")},
		"paid":  []any{routeServer(t, "paid") + " max_fails=2 fail_timeout=5s"},
		"spare": []any{routeServer(t, "spare") + spareParam, routeServer(t, "spare")},
	}}
}

// wantSplit sends 1,000 requests and checks each route's share (±2 %).
func wantSplit(t *testing.T, n *testNginx, d actuators.Splits) {
	t.Helper()
	const total = 1000
	got := n.split(total)
	want := d["chat"].Weights
	for route, pct := range want {
		if diff := got[route] - pct*total/100; diff < -total/50 || diff > total/50 {
			t.Errorf("split %v: %s got %d of %d requests, want %d%% ± 2%%", want, route, got[route], total, pct)
		}
	}
	for route := range got {
		if _, ok := want[route]; !ok {
			t.Errorf("split %v: unexpected answers from %q: %d", want, route, got[route])
		}
	}
}

// applyAndWait applies d and waits until nginx's new worker serves it.
func applyAndWait(t *testing.T, n *testNginx, a *Actuator, d actuators.Splits) {
	t.Helper()
	before := n.workers()
	if err := a.Apply(context.Background(), d); err != nil {
		t.Fatalf("Apply(%v): %v", d["chat"].Weights, err)
	}
	n.waitReloaded(before)
}

func TestSplitFollowsLevels(t *testing.T) {
	n := startNginx(t)
	a := newActuator(t, with(n.options(), chatUpstreams(t, "")))
	for _, d := range []actuators.Splits{
		split(100, 0, 0),
		split(95, 5, 0),
		split(50, 50, 0),
		split(0, 100, 0),
		split(0, 0, 100),
		split(34, 33, 33), // spare's two servers share its 33 %
		split(100, 0, 0),
	} {
		applyAndWait(t, n, a, d)
		wantSplit(t, n, d)
		got, err := a.Current(context.Background())
		if err != nil || !got["chat"].Equal(d["chat"]) {
			t.Errorf("Current = %+v, %v; want %+v", got, err, d)
		}
	}
}

func TestFailedTestRestoresFile(t *testing.T) {
	n := startNginx(t)
	upstreams := chatUpstreams(t, "")
	good := newActuator(t, with(n.options(), upstreams))
	applyAndWait(t, n, good, split(95, 5, 0))
	path := good.IncludePath("chat")
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	// The same file, with a server parameter nginx does not know.
	spare := upstreams["chat"].(map[string]any)["spare"].([]any)
	spare[0] = spare[0].(string) + " bogus_param=1"
	bad := newActuator(t, with(n.options(), upstreams))
	workers, reloads := n.workers(), n.reloads()
	err = bad.Apply(context.Background(), split(50, 50, 0))
	if err == nil {
		t.Fatal("Apply with an invalid server parameter: nil error")
	}
	t.Logf("Apply error: %v", err)
	for _, want := range []string{`[emerg] invalid parameter "bogus_param=1"`, path, "restored"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("include file not restored:\n%s\nwant\n%s", after, before)
	}
	if r := n.reloads(); r != reloads {
		t.Errorf("nginx reloaded %d times after a failed test", r-reloads)
	}
	if w := n.workers(); !slices.Equal(w, workers) {
		t.Errorf("workers %v, want the old ones %v", w, workers)
	}
	wantSplit(t, n, split(95, 5, 0))
	if got, err := good.Current(context.Background()); err != nil || !got["chat"].Equal(split(95, 5, 0)["chat"]) {
		t.Errorf("Current = %+v, %v; want the old split", got, err)
	}
	assertNoTempFiles(t, filepath.Dir(path))

	// The good configuration goes through again.
	applyAndWait(t, n, good, split(50, 50, 0))
	wantSplit(t, n, split(50, 50, 0))
}

func TestFailedTestRemovesNewFile(t *testing.T) {
	n := startNginx(t)
	a := newActuator(t, with(n.options(), chatUpstreams(t, " bogus_param=1")))
	err := a.Apply(context.Background(), split(100, 0, 0))
	if err == nil || !strings.Contains(err.Error(), `invalid parameter "bogus_param=1"`) {
		t.Fatalf("Apply: err = %v, want nginx's invalid parameter message", err)
	}
	if !strings.Contains(err.Error(), "(removed the new "+a.IncludePath("chat")+")") || strings.Contains(err.Error(), "restored") {
		t.Errorf("Apply: err = %v, want it to say the new file was removed, not restored", err)
	}
	if _, err := os.Stat(a.IncludePath("chat")); !os.IsNotExist(err) {
		t.Errorf("include file left behind after a failed test: %v", err)
	}
	assertNoTempFiles(t, filepath.Dir(a.IncludePath("chat")))
	if got, err := a.Current(context.Background()); err != nil || len(got) != 0 {
		t.Errorf("Current = %v, %v; want empty", got, err)
	}
}

func TestFailedReloadRestoresFile(t *testing.T) {
	n := startNginx(t)
	upstreams := chatUpstreams(t, "")
	good := newActuator(t, with(n.options(), upstreams))
	applyAndWait(t, n, good, split(95, 5, 0))
	path := good.IncludePath("chat")
	before, _ := os.ReadFile(path)

	opts := with(n.options(), upstreams, "reload_args", []any{"-s", "no-such-signal", "-e", n.errLog})
	bad := newActuator(t, opts)
	err := bad.Apply(context.Background(), split(0, 100, 0))
	if err == nil || !strings.Contains(err.Error(), "no-such-signal") {
		t.Fatalf("Apply with a failing reload: err = %v, want nginx's message", err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(before) {
		t.Errorf("include file not restored after a failed reload:\n%s", after)
	}
	wantSplit(t, n, split(95, 5, 0))
}

func TestReloadByPIDFile(t *testing.T) {
	n := startNginx(t)
	opts := with(n.options(), chatUpstreams(t, ""), "pid_file", n.pidFile)
	delete(opts, "reload_args")
	a := newActuator(t, opts)
	for _, d := range []actuators.Splits{split(100, 0, 0), split(50, 0, 50)} {
		applyAndWait(t, n, a, d)
		wantSplit(t, n, d)
	}

	opts["pid_file"] = filepath.Join(n.dir, "missing.pid")
	b := newActuator(t, opts)
	err := b.Apply(context.Background(), split(0, 100, 0))
	if err == nil || !strings.Contains(err.Error(), "missing.pid") {
		t.Fatalf("Apply with a missing pid_file: err = %v", err)
	}
	wantSplit(t, n, split(50, 0, 50))
}

func TestApplyUnchangedDoesNotReload(t *testing.T) {
	n := startNginx(t)
	a := newActuator(t, with(n.options(), chatUpstreams(t, "")))
	applyAndWait(t, n, a, split(95, 5, 0))
	if !n.waitReloads(1) {
		t.Fatal("no reload logged")
	}
	path := a.IncludePath("chat")
	st, workers := stat(path), n.workers()
	d := split(95, 5, 0)
	chat := d["chat"]
	chat.Levels = map[string]traffic.Level{"free": traffic.Warm}
	chat.Reasons = []string{"only informative fields differ"}
	d["chat"] = chat
	for range 3 {
		if err := a.Apply(context.Background(), d); err != nil {
			t.Fatal(err)
		}
	}
	if !stat(path).same(st) {
		t.Error("include file rewritten for an unchanged split")
	}
	if r := n.reloads(); r != 1 {
		t.Errorf("nginx reloaded %d times, want 1", r)
	}
	if w := n.workers(); !slices.Equal(w, workers) {
		t.Errorf("workers %v, want %v", w, workers)
	}
}

func TestApplyRejectsBadState(t *testing.T) {
	dir := t.TempDir()
	a := newActuator(t, map[string]any{
		"include_path": filepath.Join(dir, "{service}.conf"),
		"nginx_binary": "/nonexistent/nginx", // never reached
		"upstreams": map[string]any{
			"chat":  map[string]any{"free": []any{"127.0.0.1:1"}, "paid": []any{"127.0.0.1:2"}},
			"embed": map[string]any{"e": []any{"127.0.0.1:3"}},
		},
	})
	err := a.Apply(context.Background(), actuators.Splits{
		"chat":  {Weights: map[string]int{"free": 100, "other": 0}},
		"embed": {Weights: map[string]int{"e": 0}},
	})
	for _, want := range []string{
		`chat: route "other" has no servers in upstreams.chat`,
		`chat: no weight for route "paid" (upstreams.chat.paid)`,
		`embed: every route has weight 0`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Apply error %v does not contain %q", err, want)
		}
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("Apply of a bad state wrote %d files", len(entries))
	}
	// A missing binary is reported, and the file removed again.
	err = a.Apply(context.Background(), actuators.Splits{"chat": {Weights: map[string]int{"free": 100, "paid": 0}}})
	if err == nil || !strings.Contains(err.Error(), "/nonexistent/nginx") {
		t.Errorf("Apply without nginx: err = %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("failed Apply left %d files", len(entries))
	}
}

func TestApplyCanceled(t *testing.T) {
	dir := t.TempDir()
	a := newActuator(t, map[string]any{
		"include_path": filepath.Join(dir, "chat.conf"),
		"upstreams":    map[string]any{"chat": map[string]any{"free": []any{"127.0.0.1:1"}}},
	})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := a.Apply(ctx, actuators.Splits{"chat": {Weights: map[string]int{"free": 100}}}); err == nil {
		t.Fatal("Apply with a canceled context: nil error")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Error("Apply with a canceled context wrote a file")
	}
}

func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.Contains(e.Name(), ".tmp-") {
			t.Errorf("temporary file left behind: %s", e.Name())
		}
	}
}
