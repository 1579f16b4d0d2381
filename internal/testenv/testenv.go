// Package testenv runs the real servers that tests need (Prometheus,
// VictoriaMetrics, Alertmanager, nginx, knotd, Unleash…) as child processes
// on 127.0.0.1.
//
// A test finds the program with [Binary] (skipped when it is missing,
// failed when $CI is "true"), picks a port with [FreePort] or [FreeAddr],
// starts the server with [Start] (its output in a log file, stopped by its
// PID when the test ends, the log's tail printed if the test failed), and
// waits for it with [WaitHTTP] or [WaitUntil]. A server whose life is not
// one test's — shared by a package's tests, or kept across subtests — is
// started with [Launch] and stopped by its owner.
package testenv

import (
	"bufio"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Binary returns the path of the program name, looked up on $PATH and
// then in /usr/sbin (where Debian installs daemons such as nginx and
// knotd, and which a non-root $PATH may lack). When it is missing the test
// is skipped, or failed if $CI is "true".
func Binary(t testing.TB, name string) string {
	t.Helper()
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	if p, err := exec.LookPath(filepath.Join("/usr/sbin", name)); err == nil {
		return p
	}
	msg := fmt.Sprintf("%s not found on $PATH or in /usr/sbin (scripts/install-deps.sh installs it)", name)
	if os.Getenv("CI") == "true" {
		t.Fatal(msg + "; it is required when CI=true")
	}
	t.Skip(msg)
	return ""
}

var ports struct {
	sync.Mutex
	given map[int]bool
}

// FreePort returns a loopback port that was free for both TCP and UDP a
// moment ago and that no other caller in this process got.
func FreePort(t testing.TB) int {
	t.Helper()
	ports.Lock()
	defer ports.Unlock()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", l.Addr().String())
		l.Close()
		if err != nil {
			continue
		}
		u.Close()
		if !ports.given[port] {
			if ports.given == nil {
				ports.given = map[int]bool{}
			}
			ports.given[port] = true
			return port
		}
	}
	t.Fatal("testenv: no free loopback port for TCP and UDP")
	return 0
}

// FreeAddr returns "127.0.0.1:PORT" for a port from [FreePort].
func FreeAddr(t testing.TB) string {
	t.Helper()
	return fmt.Sprintf("127.0.0.1:%d", FreePort(t))
}

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
// owner is not the calling test, and [Start] otherwise.
func Launch(name string, cmd *exec.Cmd, logPath string) (*Process, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close() // the child has its own copy
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
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
	p, err := Launch(name, cmd, filepath.Join(t.TempDir(), name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("started %s (pid %d): %s", name, p.Pid(), strings.Join(cmd.Args, " "))
	t.Cleanup(func() {
		if err := p.Stop(); err != nil {
			t.Log(err)
		}
		if t.Failed() {
			t.Logf("--- last lines of %s (%s):\n%s", name, p.LogPath, p.LogTail(100))
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

// WaitUntil calls ready until it returns nil. It fails t, with ready's
// last error and the tail of p's log, when p exits first or when timeout
// passes.
func WaitUntil(t testing.TB, timeout time.Duration, p *Process, ready func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := ready()
		if err == nil {
			return
		}
		if p.Exited() {
			t.Fatalf("%s exited (%v) before it was ready (%v):\n%s", p.Name, p.Err(), err, p.LogTail(30))
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s not ready within %s (last: %v):\n%s", p.Name, timeout, err, p.LogTail(30))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WaitHTTP waits until a GET of url answers 200, as [WaitUntil] does.
func WaitHTTP(t testing.TB, url string, timeout time.Duration, p *Process) {
	t.Helper()
	client := &http.Client{Timeout: 5 * time.Second}
	WaitUntil(t, timeout, p, func() error {
		resp, err := client.Get(url)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return nil
	})
}
