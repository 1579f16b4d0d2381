package runner

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/hermes-failover/hermes/evaluator"
)

// TestCommandsDuringASlowTickAreKept sends every operator command while a
// tick waits for a slow Prometheus (8 s of a 15 s interval, as in the
// reported case of a pin 0.4 s into a 1.2 s tick): each must be applied by
// the next tick and still hold ticks later, never be overwritten by the
// slow tick's result.
func TestCommandsDuringASlowTickAreKept(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.02, delay: 8 * time.Second}
		r, split := newRunnerWithManualFree(t, fp)
		start(t, r)
		time.Sleep(16 * time.Second) // the first tick (at 15 s) is under way
		synctest.Wait()

		// during sends cmds 3 s into the tick at the next 15 s boundary,
		// while its queries wait, and returns their answers.
		during := func(cmds ...evaluator.Command) []CommandResult {
			t.Helper()
			now := time.Now()
			tick := now.Truncate(15 * time.Second).Add(15 * time.Second)
			time.Sleep(tick.Add(3 * time.Second).Sub(now))
			if got := status(r).LastTick; !got.Before(tick) {
				t.Fatalf("the tick at %s finished before the commands were sent (last tick %s)", tick, got)
			}
			out := make([]CommandResult, len(cmds))
			done := make(chan struct{})
			for i, c := range cmds {
				go func() {
					defer func() { done <- struct{}{} }()
					res, err := r.Submit(context.Background(), c)
					if err != nil {
						t.Errorf("%s: %v", c.Kind, err)
					}
					out[i] = res
				}()
			}
			for range cmds {
				<-done
			}
			for i, res := range out {
				if want := tick.Add(15 * time.Second); !res.Applied || !res.Tick.Equal(want) {
					t.Errorf("%s sent during the tick at %s: applied %v at %s, want applied at %s",
						cmds[i].Kind, tick, res.Applied, res.Tick, want)
				}
			}
			return out
		}
		// holds checks the state now and after two more slow ticks.
		holds := func(what string, ok func(testService) bool) {
			t.Helper()
			for i := range 3 {
				synctest.Wait()
				if svc := status(r).Services[0]; !ok(svc) {
					t.Fatalf("%s: lost %d tick(s) after it was applied: override %+v, weights %v, free %s",
						what, i, svc.Override, svc.Weights, svc.Routes[0].Level)
				}
				time.Sleep(15 * time.Second)
			}
		}

		during(
			evaluator.Command{Kind: evaluator.CommandPin, Service: "chat", Route: "paid-premium", Reason: "launch day", By: "alice"},
			evaluator.Command{Kind: evaluator.CommandRelease, Route: "free", Reason: "fixed upstream", By: "bob"},
		)
		holds("pin and release", func(s testService) bool {
			return s.Override != nil && s.Override.Kind == "pin" && s.Override.By == "alice" &&
				s.Weights["paid-premium"] == 100 && weights(t, split)["paid-premium"] == 100 &&
				s.Routes[0].Level != "manual"
		})
		saved, err := loadOverrides(r.opts.OverridesPath)
		if err != nil || saved["chat"].Kind != "pin" {
			t.Errorf("overrides file after the pin: %v %v", saved, err)
		}

		// A pause over the pin is refused at Submit unless it says
		// Replace: the pin and its expiry are not lost by accident.
		if _, err := r.Submit(context.Background(), evaluator.Command{Kind: evaluator.CommandPause, Service: "chat", Reason: "freeze", By: "carol"}); err == nil ||
			!strings.Contains(err.Error(), `service "chat" is pinned to "paid-premium" by alice`) {
			t.Errorf("pause over a pin without replace: %v, want refused", err)
		}
		during(evaluator.Command{Kind: evaluator.CommandPause, Service: "chat", Reason: "freeze for the audit", By: "carol", Replace: true})
		holds("pause", func(s testService) bool {
			return s.Override != nil && s.Override.Kind == "pause" && s.Override.By == "carol" && s.Weights["paid-premium"] == 100
		})

		during(evaluator.Command{Kind: evaluator.CommandClear, Service: "chat", Reason: "audit over", By: "carol"})
		holds("clear", func(s testService) bool { return s.Override == nil })
		saved, err = loadOverrides(r.opts.OverridesPath)
		if err != nil || len(saved) != 0 {
			t.Errorf("overrides file after the clear: %v %v", saved, err)
		}
	})
}

// newRunnerWithManualFree returns a runner whose file actuator holds the
// split of an earlier run that left free in manual, and the split's path.
func newRunnerWithManualFree(t *testing.T, fp *fakeProm) (*Runner, string) {
	t.Helper()
	dir := t.TempDir()
	split := filepath.Join(dir, "split.json")
	state := `{"services":{"chat":{"weights":{"free":0,"paid-standard":100,"paid-premium":0},"retries_enabled":false,"degraded_mode":false,
"levels":{"free":"manual","paid-standard":"normal","paid-premium":"normal"}}},"updated_at":"2000-01-01T00:00:00Z"}`
	if err := os.WriteFile(split, []byte(state), 0o644); err != nil {
		t.Fatal(err)
	}
	r, _ := newFileRunner(t, fp, dir, Options{})
	return r, split
}

// TestCommandCheckedAgainstTheTickInFlight: a pin queued just before a
// slow tick has been taken by that tick but not applied yet when a clear
// arrives; the clear must be checked against the state with the pin, not
// refused with "no override".
func TestCommandCheckedAgainstTheTickInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.02, delay: 8 * time.Second}
		r, _ := newRunnerWithManualFree(t, fp)
		start(t, r)
		time.Sleep(14 * time.Second)
		pinned := make(chan error, 1)
		go func() {
			_, err := r.Submit(context.Background(), evaluator.Command{Kind: evaluator.CommandPin, Service: "chat", Route: "paid-premium", Reason: "r"})
			pinned <- err
		}()
		time.Sleep(2 * time.Second) // the tick at 15 s took the pin and waits for Prometheus
		synctest.Wait()
		if _, err := r.Submit(context.Background(), evaluator.Command{Kind: evaluator.CommandClear, Service: "chat", Reason: "r"}); err != nil {
			t.Errorf("clear during the tick that applies the pin: %v", err)
		}
		if err := <-pinned; err != nil {
			t.Errorf("pin: %v", err)
		}
	})
}
