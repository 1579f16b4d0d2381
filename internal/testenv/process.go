package testenv

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/internal/deathsig"
)

// Process is a child process whose output goes to a log file.
type Process struct {
	Name    string // for messages
	LogPath string // its stdout and stderr

	// How Stop ends it: StopSignal (default SIGTERM), then SIGKILL if it
	// is still running after StopTimeout (default 10s). Set them before
	// the process is stopped.
	StopSignal  os.Signal
	StopTimeout time.Duration

	cmd  *exec.Cmd
	done chan struct{} // closed once Wait has returned
	err  error         // what Wait returned
}

// Launch starts cmd with its stdout and stderr appended to logPath. Nothing
// stops it but [Process.Stop] or [Process.Kill]: use it for a server whose
// owner is not the calling test, and [Start] otherwise. Either way it is
// sent SIGTERM if the test binary dies first (killed at its -timeout, by a
// cancelled CI job), whose cleanups then never run: a server outliving
// its test would hold its port and its CPU through the runs after it.
func Launch(name string, cmd *exec.Cmd, logPath string) (*Process, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close() // the child has its own copy
	cmd.Stdout, cmd.Stderr = f, f
	if err := deathsig.Start(cmd, syscall.SIGTERM); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	p := &Process{
		Name: name, LogPath: logPath,
		StopSignal: syscall.SIGTERM, StopTimeout: 10 * time.Second,
		cmd: cmd, done: make(chan struct{}),
	}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// Start launches cmd with its log in t.TempDir(). When t ends, the process
// is stopped ([Process.Stop]) and, if t failed, the tail of its log is
// printed.
func Start(t testing.TB, name string, cmd *exec.Cmd) *Process {
	t.Helper()
	return startOwned(t, t, name, cmd, filepath.Join(t.TempDir(), name+".log"), nil)
}

// startOwned launches cmd with its log at logPath, logging the start on t.
// At the end of owner (t or a parent of t) the process is stopped, after
// beforeStop if not nil, and the tail of its log printed if owner failed.
func startOwned(t, owner testing.TB, name string, cmd *exec.Cmd, logPath string, beforeStop func(*Process)) *Process {
	t.Helper()
	p, err := Launch(name, cmd, logPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("started %s (pid %d): %s", name, p.Pid(), strings.Join(cmd.Args, " "))
	owner.Cleanup(func() {
		if beforeStop != nil {
			beforeStop(p)
		}
		if err := p.Stop(); err != nil {
			owner.Log(err)
		}
		if owner.Failed() {
			owner.Logf("--- last lines of %s (%s):\n%s", name, p.LogPath, p.LogTail(100))
		}
	})
	return p
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Err is what waiting for the process returned (such as "exit status 1"
// or "signal: killed"), once it has exited; nil before.
func (p *Process) Err() error {
	if !p.Exited() {
		return nil
	}
	return p.err
}

// Signal sends sig to the process (SIGHUP to reload, SIGSTOP to make it
// hang…). On an ended process it returns [os.ErrProcessDone].
func (p *Process) Signal(sig os.Signal) error {
	if p.Exited() {
		return os.ErrProcessDone
	}
	return p.cmd.Process.Signal(sig)
}

// Stop sends StopSignal to the process and waits for it to end; after
// StopTimeout it sends SIGKILL and returns an error saying so. It does
// nothing to an ended process.
func (p *Process) Stop() error {
	if p.Exited() {
		return nil
	}
	_ = p.cmd.Process.Signal(p.StopSignal)
	select {
	case <-p.done:
		return nil
	case <-time.After(p.StopTimeout):
		_ = p.cmd.Process.Kill()
		<-p.done
		return fmt.Errorf("%s (pid %d) ignored %v for %s; sent SIGKILL", p.Name, p.Pid(), p.StopSignal, p.StopTimeout)
	}
}

// Kill sends SIGKILL and waits for the process to end.
func (p *Process) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// LogTail returns the last n lines of the process's log.
func (p *Process) LogTail(n int) string { return Tail(p.LogPath, n) }

// Tail returns the last n lines of a file (or why it cannot be read).
func Tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}
