package runner

import (
	"context"
	"log/slog"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/internal/testenv"
)

// TestStopDuringATickDropsIt stops Hermes while a tick's queries wait on a
// slow Prometheus: the canceled queries are not data, so the tick is
// dropped, not judged: no query error is counted and the state stays the
// last tick's.
func TestStopDuringATickDropsIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		fp := &fakeProm{soft: 0.02}
		dir := t.TempDir()
		reg := prometheus.NewRegistry()
		r, _ := newFileRunner(t, fp, dir, Options{Registerer: reg, Logger: slog.New(slog.DiscardHandler)})
		ctx, cancel := context.WithCancel(t.Context())
		done := make(chan error, 1)
		go func() { done <- r.Run(ctx) }()
		time.Sleep(16 * time.Second) // the first tick, at 15 s, answered at once
		synctest.Wait()
		first := status(r).LastTick
		if first.IsZero() {
			t.Fatal("no tick in 16 s")
		}
		fp.mu.Lock()
		fp.delay = time.Minute // the next tick's queries wait
		fp.mu.Unlock()
		time.Sleep(17 * time.Second) // the tick at 30 s is under way
		synctest.Wait()

		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if got := status(r).LastTick; !got.Equal(first) {
			t.Errorf("last tick %s after a stop during the next one, want %s (the stopped tick dropped)", got, first)
		}
		if n := testenv.Metric(t, reg, "hermes_query_errors_total", nil); n > 0 {
			t.Errorf("hermes_query_errors_total = %g after a stop during a tick, want 0: canceled queries are not failures", n)
		}
	})
}
