package testenv

import (
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestBinary(t *testing.T) {
	if p := Binary(t, "sh"); !strings.HasSuffix(p, "/sh") {
		t.Errorf("Binary(sh) = %q", p)
	}
	t.Setenv("CI", "")
	var sub *testing.T
	t.Run("missing", func(t *testing.T) {
		sub = t
		Binary(t, "hermes-testenv-no-such-program")
		t.Error("Binary returned for a missing program")
	})
	if !sub.Skipped() {
		t.Error("a missing program outside CI did not skip the test")
	}
}

func TestFreePortNeverRepeats(t *testing.T) {
	seen := map[int]bool{}
	for range 50 {
		p := FreePort(t)
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
	}
	addr := FreeAddr(t)
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("FreeAddr %s: %v", addr, err)
	}
	l.Close()
	u, err := net.ListenPacket("udp", addr)
	if err != nil {
		t.Fatalf("FreeAddr %s (udp): %v", addr, err)
	}
	u.Close()
}

// TestStopKillsAfterTimeout runs a process that ignores SIGTERM.
func TestStopKillsAfterTimeout(t *testing.T) {
	p := Start(t, "stubborn", exec.Command("sh", "-c", "echo one; echo two; echo three; trap '' TERM; exec sleep 60"))
	p.StopTimeout = 300 * time.Millisecond
	WaitUntil(t, 10*time.Second, p, func() error {
		if tail := p.LogTail(2); tail != "two\nthree" {
			return fmt.Errorf("log tail %q", tail)
		}
		return nil
	})
	if p.Exited() || p.Err() != nil {
		t.Fatalf("exited early: %v", p.Err())
	}
	start := time.Now()
	err := p.Stop()
	if err == nil || !strings.Contains(err.Error(), "sent SIGKILL") {
		t.Errorf("Stop() = %v, want it to say it sent SIGKILL", err)
	}
	if d := time.Since(start); d < 300*time.Millisecond || d > 5*time.Second {
		t.Errorf("Stop took %s, want StopTimeout (300ms) and a little", d)
	}
	if !p.Exited() || p.Err() == nil || !strings.Contains(p.Err().Error(), "killed") {
		t.Errorf("after Stop: exited %v, err %v; want killed", p.Exited(), p.Err())
	}
	if err := p.Stop(); err != nil {
		t.Errorf("second Stop() = %v", err)
	}
}

func TestWaitHTTP(t *testing.T) {
	p := Start(t, "sleep", exec.Command("sleep", "60"))
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) < 3 {
			http.Error(w, "starting", http.StatusServiceUnavailable)
		}
	}))
	defer srv.Close()
	WaitHTTP(t, srv.URL, 10*time.Second, p)
	if n := calls.Load(); n != 3 {
		t.Errorf("%d GETs, want 3 (two 503s, then 200)", n)
	}
	if err := p.Stop(); err != nil || !p.Exited() {
		t.Errorf("Stop() = %v, exited %v", err, p.Exited())
	}
}
