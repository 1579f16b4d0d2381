package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"github.com/hermes-failover/hermes/internal/deathsig"
)

// labChild is a server the lab runs as a child process, its output in a
// log file. It is started in its own process group, so that a Ctrl-C in
// the terminal reaches the lab alone, which stops its children by PID in
// order. A lab that dies without stopping them (SIGKILL) has them sent
// SIGTERM by the kernel.
type labChild struct {
	name string
	log  string
	// stopSig ends it: SIGTERM, or SIGQUIT for nginx's graceful stop.
	stopSig syscall.Signal
	cmd     *exec.Cmd
	done    chan struct{}
	err     error
}

func startChild(name, logPath string, stopSig syscall.Signal, bin string, args ...string) (*labChild, error) {
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close() // the child has its own copy
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := deathsig.Start(cmd, syscall.SIGTERM); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	c := &labChild{name: name, log: logPath, stopSig: stopSig, cmd: cmd, done: make(chan struct{})}
	go func() {
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// stop sends the stop signal to the child's PID, and SIGKILL if it has not
// ended after timeout.
func (c *labChild) stop(timeout time.Duration) error {
	select {
	case <-c.done:
		return nil
	default:
	}
	_ = c.cmd.Process.Signal(c.stopSig)
	select {
	case <-c.done:
		return nil
	case <-time.After(timeout):
		_ = c.cmd.Process.Kill()
		<-c.done
		return fmt.Errorf("%s (pid %d) ignored %v for %s; killed", c.name, c.cmd.Process.Pid, c.stopSig, timeout)
	}
}

// tail is the last n lines of the child's log.
func (c *labChild) tail(n int) string {
	f, err := os.Open(c.log)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// waitReady polls ready until it returns nil, the child exits, ctx ends
// or timeout passes.
func (c *labChild) waitReady(ctx context.Context, timeout time.Duration, ready func() error) error {
	deadline := time.Now().Add(timeout)
	for {
		err := ready()
		if err == nil {
			return nil
		}
		select {
		case <-c.done:
			return fmt.Errorf("%s exited (%v) before it was ready (%v); the end of %s:\n%s", c.name, c.err, err, c.log, c.tail(20))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not ready within %s (%v); the end of %s:\n%s", c.name, timeout, err, c.log, c.tail(20))
		}
	}
}

// httpOK is a readiness check: GET url answers 200.
func httpOK(url string) func() error {
	client := &http.Client{Timeout: 2 * time.Second}
	return func() error {
		resp, err := client.Get(url)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("GET %s: %s", url, resp.Status)
		}
		return nil
	}
}

// listening is a readiness check: addr accepts TCP connections.
func listening(addr string) func() error {
	return func() error {
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err != nil {
			return err
		}
		return c.Close()
	}
}

// findBinary looks name up on $PATH, then in /usr/sbin (where Debian puts
// nginx, which a non-root $PATH may lack).
func findBinary(names ...string) (string, error) {
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p, nil
		}
		if p, err := exec.LookPath("/usr/sbin/" + name); err == nil {
			return p, nil
		}
	}
	return "", errors.New(strings.Join(names, " or ") + " not found on $PATH or in /usr/sbin (Debian: apt-get install prometheus prometheus-alertmanager nginx; scripts/install-deps.sh installs them)")
}
