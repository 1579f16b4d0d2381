package runner

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/evaluator"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/runner/persist"
	"github.com/hermes-failover/hermes/runner/tick"
)

// TestFailingQueriesLoggedOnce: ticks whose every query fails log one
// line for the failed queries and one for not ready, however many ticks;
// the end of the failure is one line each; a different failure is a new
// line.
func TestFailingQueriesLoggedOnce(t *testing.T) {
	var logs testenv.Buffer
	fp := &fakeProm{soft: 0.02, fail: syscall.ECONNREFUSED}
	r, _ := newFileRunner(t, fp, t.TempDir(), Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: dropTime}))})
	ts := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	tick := func() {
		r.tick(t.Context(), ts)
		ts = ts.Add(15 * time.Second)
	}
	count := func(msg string) int { return countLines(&logs, msg) }
	const n = 30
	for range n {
		tick()
	}
	if failed, notReady := count("signal queries failed"), count("not ready"); failed != 1 || notReady != 1 {
		t.Fatalf("%d ticks logged %d lines for the failed queries and %d for not ready, want 1 each:\n%s", n, failed, notReady, logs.String())
	}
	if !strings.Contains(logs.String(), `reason=connection signals=`) || !strings.Contains(logs.String(), `detail="connection refused"`) {
		t.Errorf("the line lacks the reason or the detail:\n%s", logs.String())
	}
	fp.mu.Lock()
	fp.fail = nil
	fp.mu.Unlock()
	tick()
	tick()
	if again, ready := count("signal queries answer again"), count("ready: the tick had data"); again != 1 || ready != 1 {
		t.Fatalf("the end logged %d lines for the queries and %d for ready, want 1 each:\n%s", again, ready, logs.String())
	}
	fp.mu.Lock()
	fp.fail = context.DeadlineExceeded
	fp.mu.Unlock()
	tick()
	tick()
	if failed := count("signal queries failed"); failed != 2 || !strings.Contains(logs.String(), "reason=timeout") {
		t.Errorf("another failure logged %d lines in all for failed queries, want 2 (one per failure):\n%s", failed, logs.String())
	}
}

// TestFailingWritesLoggedOnce: an actuator that cannot write, and a state
// file that cannot be saved, are one line each however many ticks they
// fail, and one line each when they work again.
func TestFailingWritesLoggedOnce(t *testing.T) {
	var logs testenv.Buffer
	dir := t.TempDir()
	blocker := filepath.Join(dir, "blocker")
	if err := os.Mkdir(blocker, 0o755); err != nil {
		t.Fatal(err)
	}
	r, _ := newFileRunner(t, &fakeProm{soft: 0.02}, dir, Options{ConfigPath: writeConfig(t, dir, filepath.Join(blocker, "split.json")),
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: dropTime}))})
	// A file where the directory of the split and the state file should
	// be, after the configuration was checked: every write fails.
	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	ts := time.Date(2026, 12, 6, 8, 0, 0, 0, time.UTC)
	step := func() {
		r.tick(t.Context(), ts)
		ts = ts.Add(15 * time.Second)
	}
	count := func(msg string) int { return countLines(&logs, msg) }
	const n = 20
	for range n {
		step()
	}
	if failed := count("actuation failed"); failed != 1 {
		t.Fatalf("%d ticks logged %d lines for the failing actuator, want 1:\n%s", n, failed, logs.String())
	}

	saves := persist.NewStage(persist.StageOptions{Path: filepath.Join(blocker, "state.json"), Logger: r.log, Now: time.Now, Registerer: prometheus.NewRegistry()})
	pinned := evaluator.State{Overrides: map[string]evaluator.Override{"chat": {}}}
	for range n {
		saves.Tick(t.Context(), &tick.Result{Time: ts, Policy: r.pol, Next: pinned})
		ts = ts.Add(15 * time.Second)
	}
	if failed := count("cannot save the state file"); failed != 1 {
		t.Fatalf("%d ticks logged %d lines for the unsaved state file, want 1:\n%s", n, failed, logs.String())
	}

	if err := os.Remove(blocker); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(blocker, 0o755); err != nil {
		t.Fatal(err)
	}
	step()
	step()
	saves.Tick(t.Context(), &tick.Result{Time: ts, Policy: r.pol, Next: pinned})
	saves.Tick(t.Context(), &tick.Result{Time: ts.Add(15 * time.Second), Policy: r.pol, Prev: pinned, Next: pinned})
	if again, saved := count("actuation works again"), count("the state file is saved again"); again != 1 || saved != 1 {
		t.Errorf("the end logged %d lines for the actuator and %d for the state file, want 1 each:\n%s", again, saved, logs.String())
	}
	if strings.Contains(logs.String(), `msg="actuation works again" actuator=file err=`) {
		t.Errorf("the end line carries the old error:\n%s", logs.String())
	}
}

// countLines counts the lines of logs whose message has msg in it: the
// condition's first line, its changed: and still: lines.
func countLines(logs *testenv.Buffer, msg string) int {
	n := 0
	for line := range strings.Lines(logs.String()) {
		if _, m, ok := strings.Cut(line, `msg="`); ok && strings.Contains(m[:strings.Index(m, `"`)], msg) {
			n++
		}
	}
	return n
}

// TestOverrunsLoggedOnce: ticks that keep overrunning their interval are
// one line, a reminder every condlog.RemindEvery, and one line once none overran
// for condlog.RemindEvery.
func TestOverrunsLoggedOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var logs testenv.Buffer
		fp := &fakeProm{soft: 0.02, delay: 40 * time.Second}
		r, _ := newFileRunner(t, fp, t.TempDir(), Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{ReplaceAttr: dropTime}))})
		r.cfg.Global.QueryTimeout = time.Minute // let the tick overrun on purpose
		stop := start(t, r)
		time.Sleep(15 * time.Minute)
		synctest.Wait()
		if n, still := countLines(&logs, "tick overran"), countLines(&logs, "still: tick overran"); n != 2 || still != 1 {
			t.Errorf("15 minutes of overruns logged %d lines, %d of them reminders; want 2, 1:\n%s", n, still, logs.String())
		}
		fp.mu.Lock()
		fp.delay = 0
		fp.mu.Unlock()
		time.Sleep(5 * time.Minute)
		synctest.Wait()
		if n := countLines(&logs, "ticks on time again"); n != 0 {
			t.Errorf("5 minutes on time logged the end already:\n%s", logs.String())
		}
		time.Sleep(6 * time.Minute)
		synctest.Wait()
		if n := countLines(&logs, "ticks on time again"); n != 1 {
			t.Errorf("11 minutes on time logged %d ends, want 1:\n%s", n, logs.String())
		}
		stop()
	})
}
