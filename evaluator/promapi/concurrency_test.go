package promapi

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules"
)

// TestCollectBoundsConcurrentQueries: of ten distinct queries at most
// maxConcurrentQueries run at once, and every one runs.
func TestCollectBoundsConcurrentQueries(t *testing.T) {
	const n = 10
	if maxConcurrentQueries >= n {
		t.Fatalf("the test needs more queries than the bound %d", maxConcurrentQueries)
	}
	var signals []rules.SignalConfig
	for i := range n {
		signals = append(signals, rules.SignalConfig{Name: fmt.Sprintf("s%d", i), Query: fmt.Sprintf("q%d", i)})
	}
	var inflight, peak, ran atomic.Int32
	release := make(chan struct{})
	query := func(ctx context.Context, q string, _ time.Time) (model.Vector, error) {
		now := inflight.Add(1)
		for p := peak.Load(); now > p && !peak.CompareAndSwap(p, now); p = peak.Load() {
		}
		<-release
		inflight.Add(-1)
		ran.Add(1)
		return model.Vector{sample(1, "route", "free")}, nil
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		Collect(context.Background(), query, signals, []string{"free"}, time.Unix(1_700_000_000, 0), 10*time.Second)
	}()
	for i := range n {
		want := int32(min(maxConcurrentQueries, n-i))
		testenv.Eventually(t, 10*time.Second, fmt.Sprintf("%d queries in flight", want), func() bool { return inflight.Load() == want })
		release <- struct{}{}
	}
	<-done
	if p := peak.Load(); p > maxConcurrentQueries {
		t.Errorf("%d queries ran at once, want at most %d", p, maxConcurrentQueries)
	}
	if r := ran.Load(); r != n {
		t.Errorf("%d queries ran, want %d", r, n)
	}
}
