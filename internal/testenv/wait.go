package testenv

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

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

// Eventually polls cond until it holds, and fails t once timeout passes
// without it, naming what it waited for.
func Eventually(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	EventuallyDetail(t, timeout, what, func() (bool, string) { return cond(), "" })
}

// EventuallyDetail polls cond until it holds, logging how long that took,
// and fails t once timeout passes without it, with what it waited for and
// cond's last explanation. Polls start a few milliseconds apart and slow
// down to five a second.
func EventuallyDetail(t testing.TB, timeout time.Duration, what string, cond func() (ok bool, detail string)) {
	t.Helper()
	start := time.Now()
	pause := 5 * time.Millisecond
	for {
		ok, detail := cond()
		if ok {
			t.Logf("%s after %s", what, time.Since(start).Round(10*time.Millisecond))
			return
		}
		if time.Since(start) > timeout {
			if detail != "" {
				detail = "; last: " + detail
			}
			t.Fatalf("timed out after %s waiting for %s%s", timeout, what, detail)
		}
		time.Sleep(pause)
		pause = min(2*pause, 200*time.Millisecond)
	}
}

// Go runs run in a goroutine until t ends; then it cancels run's context
// and waits for it to return. Cleanups registered before Go run after
// that (a server that run talks to outlives it).
func Go(t testing.TB, run func(ctx context.Context)) {
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { run(ctx) })
	t.Cleanup(func() {
		cancel()
		wg.Wait()
	})
}
