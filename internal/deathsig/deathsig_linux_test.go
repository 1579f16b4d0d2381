package deathsig

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// helperEnv makes the test binary the parent of TestChildEndsWithParent.
const helperEnv = "DEATHSIG_HELPER_PARENT"

// TestMain, run with helperEnv set, is that parent: it starts a child,
// prints the child's PID and waits to be killed.
func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "" {
		os.Exit(m.Run())
	}
	cmd := exec.Command("sleep", "300")
	if err := Start(cmd, syscall.SIGTERM); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println(cmd.Process.Pid)
	select {}
}

// TestChildEndsWithParent kills a parent with SIGKILL, which runs none of
// its code, and sees its child end.
func TestChildEndsWithParent(t *testing.T) {
	parent := exec.Command(os.Args[0])
	parent.Env = append(os.Environ(), helperEnv+"=1")
	out, err := parent.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := parent.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = parent.Process.Kill()
		t.Fatalf("reading the child's PID: %v", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(line))
	if err != nil {
		_ = parent.Process.Kill()
		t.Fatalf("the parent said %q", line)
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	if !running(pid) {
		t.Fatalf("child %d is not running while its parent is", pid)
	}
	if err := parent.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	_ = parent.Wait()
	waitGone(t, pid, 10*time.Second)
}

// TestChildOutlivesTheCallerThread starts a child from a goroutine that
// holds its thread and returns, which ends the thread: the child, whose
// parent-death signal follows the thread that forked it, must not get
// it then.
func TestChildOutlivesTheCallerThread(t *testing.T) {
	cmd, thread := startFromEndingThread(t)
	pid := cmd.Process.Pid
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	task := fmt.Sprintf("/proc/self/task/%d", thread)
	deadline := time.Now().Add(10 * time.Second)
	for {
		if _, err := os.Stat(task); os.IsNotExist(err) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("thread %d still exists after its locked goroutine returned", thread)
		}
		time.Sleep(10 * time.Millisecond)
	}
	// The signal, had it been sent, was sent as the thread exited; sleep
	// dies of it at once. Give it a moment before looking.
	time.Sleep(200 * time.Millisecond)
	var ws syscall.WaitStatus
	if got, err := syscall.Wait4(pid, &ws, syscall.WNOHANG, nil); err != nil || got != 0 {
		t.Fatalf("child %d ended when the thread that asked for it did (wait4: %d, %v, %v)", pid, got, ws, err)
	}
}

// startFromEndingThread starts a child from a goroutine locked to a
// thread that ends when the goroutine returns, and gives the thread's
// ID. The runtime never ends the main thread: a locked goroutine that
// returns there wedges it instead (runtime.mexit). So a goroutine that
// lands on the main thread keeps it locked, which no other goroutine
// can then run on, while the next one starts the child.
func startFromEndingThread(t *testing.T) (*exec.Cmd, int) {
	t.Helper()
	type started struct {
		cmd    *exec.Cmd
		thread int
		err    error
	}
	var attempt func() started
	attempt = func() started {
		res := make(chan started, 1)
		go func() {
			runtime.LockOSThread()
			if syscall.Gettid() == syscall.Getpid() {
				r := attempt()
				runtime.UnlockOSThread()
				res <- r
				return
			}
			// Never unlocked: the thread ends with the goroutine.
			cmd := exec.Command("sleep", "300")
			res <- started{cmd, syscall.Gettid(), Start(cmd, syscall.SIGTERM)}
		}()
		return <-res
	}
	r := attempt()
	if r.err != nil {
		t.Fatal(r.err)
	}
	return r.cmd, r.thread
}

// running says whether pid is a process that has not ended (a zombie has
// ended; who reaps an orphan is not ours to wait for).
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	// pid (comm) state …: the state follows the last ')'.
	s := string(stat)
	i := strings.LastIndexByte(s, ')')
	return i >= 0 && i+2 < len(s) && s[i+2] != 'Z' && s[i+2] != 'X'
}

func waitGone(t *testing.T, pid int, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for running(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("child %d still running %s after its parent was killed", pid, within)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
