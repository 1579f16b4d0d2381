package testenv

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

func TestSignal(t *testing.T) {
	// SIGUSR1, not SIGHUP: under nohup the children inherit an ignored
	// SIGHUP, which a non-interactive shell may not trap (POSIX), and the
	// test failed for that reason alone.
	p := Start(t, "trap", execShell("trap 'echo got USR1' USR1; echo ready; while :; do sleep 0.05; done"))
	WaitUntil(t, 10*time.Second, p, func() error { return lastLine(p, "ready") })
	if err := p.Signal(syscall.SIGUSR1); err != nil {
		t.Fatal(err)
	}
	WaitUntil(t, 10*time.Second, p, func() error { return lastLine(p, "got USR1") })
	p.Kill()
	if err := p.Signal(syscall.SIGUSR1); !errors.Is(err, os.ErrProcessDone) {
		t.Errorf("Signal to an ended process = %v, want os.ErrProcessDone", err)
	}
}

// TestServerRestart starts a server twice on the same command line: one
// log per start, both in Dir.
func TestServerRestart(t *testing.T) {
	ready := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer ready.Close()
	dir := t.TempDir()
	s := NewServer(t, "sleeper", dir, ready.URL, "sh", "-c", "pwd; exec sleep 60")
	s.Start(t)
	first := s.Process()
	s.Stop(t)
	if !first.Exited() {
		t.Fatal("Stop left the process running")
	}
	s.Start(t)
	if s.Process() == first || s.Process().Exited() {
		t.Fatal("Start did not start a new process")
	}
	if want := dir + "/sleeper-2.log"; s.LogPath() != want {
		t.Errorf("log %s, want %s", s.LogPath(), want)
	}
	WaitUntil(t, 10*time.Second, s.Process(), func() error { return lastLine(s.Process(), dir) })
}

func TestEventuallyPollsUntilTrue(t *testing.T) {
	calls := 0
	start := time.Now()
	Eventually(t, 10*time.Second, "the third call", func() bool { calls++; return calls == 3 })
	if calls != 3 {
		t.Errorf("%d calls, want 3", calls)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("three polls took %s", d)
	}
}

func TestGoStopsAtCleanup(t *testing.T) {
	var stopped bool
	t.Run("sub", func(t *testing.T) {
		Go(t, func(ctx context.Context) { <-ctx.Done(); stopped = true })
	})
	if !stopped {
		t.Error("the goroutine had not returned when the test ended")
	}
}

func execShell(script string) *exec.Cmd { return exec.Command("sh", "-c", script) }

func lastLine(p *Process, want string) error {
	if got := strings.TrimSpace(p.LogTail(1)); got != want {
		return errors.New("last line " + strconv.Quote(got) + ", want " + strconv.Quote(want))
	}
	return nil
}
