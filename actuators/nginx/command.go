package nginx

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// maxOutput bounds how much of nginx's output is kept, and maxMessage how
// much of it an error carries.
const (
	maxOutput  = 64 << 10
	maxMessage = 2000
)

// test runs nginx with test_args (`nginx -t`).
func (a *Actuator) test(ctx context.Context) error {
	return a.run(ctx, a.cfg.TestArgs)
}

// reload runs nginx with reload_args, or signals the master with SIGHUP
// when pid_file is set.
func (a *Actuator) reload(ctx context.Context) error {
	var err error
	if a.cfg.PIDFile != "" {
		err = signalPIDFile(a.cfg.PIDFile, syscall.SIGHUP)
	} else {
		err = a.run(ctx, a.cfg.ReloadArgs)
	}
	if err != nil {
		// nginx may be restarting: the configuration passed the test.
		return transient{err}
	}
	return nil
}

// args are nginx's arguments: -p and -c when set, then extra.
func (a *Actuator) args(extra []string) []string {
	var args []string
	if a.cfg.Prefix != "" {
		args = append(args, "-p", a.cfg.Prefix)
	}
	if a.cfg.ConfigFile != "" {
		args = append(args, "-c", a.cfg.ConfigFile)
	}
	return append(args, extra...)
}

// run runs nginx (no shell) within command_timeout. Its error names the
// command and carries nginx's trimmed output; when nginx was killed it says
// which deadline came first (see stopped).
func (a *Actuator) run(ctx context.Context, extra []string) error {
	start := time.Now()
	ctx, cancel := context.WithTimeoutCause(ctx, a.cfg.CommandTimeout, errCommandTimeout)
	defer cancel()
	args := a.args(extra)
	cmd := exec.CommandContext(ctx, a.cfg.NginxBinary, args...)
	var out capped
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if err == nil {
		return nil
	}
	line := strings.Join(append([]string{a.cfg.NginxBinary}, args...), " ")
	if msg := message(out.Bytes()); msg != "" {
		err = fmt.Errorf("%s: %w: %s", line, err, msg)
	} else {
		err = fmt.Errorf("%s: %w", line, err)
	}
	if why := a.stopped(ctx, time.Since(start)); why != "" {
		return transient{fmt.Errorf("%w (%s)", err, why)}
	}
	return err
}

// errCommandTimeout is the cause of a context that command_timeout ended.
var errCommandTimeout = errors.New("command_timeout")

// stopped says why ctx, made by WithTimeoutCause with errCommandTimeout,
// ended, after elapsed: its own command_timeout, or the caller's deadline
// (the tick's) or cancellation, which may come long before it. It is empty
// while ctx is live.
func (a *Actuator) stopped(ctx context.Context, elapsed time.Duration) string {
	if ctx.Err() == nil {
		return ""
	}
	cause := context.Cause(ctx)
	switch {
	case errors.Is(cause, errCommandTimeout):
		return fmt.Sprintf("timed out after %v (command_timeout)", a.cfg.CommandTimeout)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Sprintf("cut by the tick's deadline after %v, before command_timeout %v", elapsed.Round(time.Millisecond), a.cfg.CommandTimeout)
	}
	return fmt.Sprintf("cancelled after %v: %v", elapsed.Round(time.Millisecond), cause)
}

// message turns nginx's output into one line: lines trimmed, empty ones
// dropped, joined by "; ", cut at maxMessage bytes.
func message(out []byte) string {
	var lines []string
	for l := range strings.SplitSeq(string(out), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	msg := strings.Join(lines, "; ")
	if len(msg) > maxMessage {
		msg = strings.ToValidUTF8(msg[:maxMessage], "") + "…"
	}
	return msg
}

// signalPIDFile sends sig to the process whose PID is in path.
func signalPIDFile(path string, sig os.Signal) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("reloading nginx: %w", err)
	}
	s := strings.TrimSpace(string(data))
	pid, err := strconv.Atoi(s)
	if err != nil || pid <= 1 {
		return fmt.Errorf("reloading nginx: pid_file %s holds %q, not a process ID", path, s)
	}
	p, err := os.FindProcess(pid)
	if err == nil {
		err = p.Signal(sig)
	}
	if err != nil {
		return fmt.Errorf("reloading nginx: signalling PID %d from %s: %w", pid, path, err)
	}
	return nil
}

// capped keeps the first maxOutput bytes written to it.
type capped struct{ bytes.Buffer }

func (c *capped) Write(p []byte) (int, error) {
	if room := maxOutput - c.Len(); room > 0 {
		c.Buffer.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

// transient marks an error that may go away by itself (a timeout, a reload
// while nginx restarts), for wrappers that retry: they look for a
// Retryable method (see actuators.RetryableError).
type transient struct{ err error }

func (e transient) Error() string   { return e.err.Error() }
func (e transient) Unwrap() error   { return e.err }
func (e transient) Retryable() bool { return true }
