package promapi

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/internal/testenv"
)

// gatedBody is an answer whose reading the test lets go one at a time.
type gatedBody struct {
	io.Reader
	gate             chan struct{}
	reading, peak    *atomic.Int32
	started, stopped bool
}

func (b *gatedBody) Read(p []byte) (int, error) {
	if !b.started {
		b.started = true
		n := b.reading.Add(1)
		for p := b.peak.Load(); n > p && !b.peak.CompareAndSwap(p, n); p = b.peak.Load() {
		}
		<-b.gate
	}
	n, err := b.Reader.Read(p)
	if err == io.EOF && !b.stopped {
		b.stopped = true
		b.reading.Add(-1)
	}
	return n, err
}

func (b *gatedBody) Close() error { return nil }

// TestAnswersAreDecodedFewAtATime: a tick's queries all wait for
// Prometheus at once, but at most maxDecoding answers are read and decoded
// at a time, and every query gets its answer; as vectors, by route, or
// by both paths of one Client, which share its bound.
func TestAnswersAreDecodedFewAtATime(t *testing.T) {
	t.Run("vector", func(t *testing.T) {
		answersDecodedFewAtATime(t, func(rt http.RoundTripper) QueryFunc {
			c, err := newClient("http://prometheus.invalid", &http.Client{Transport: rt}, 15*time.Second, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			return c.Query
		})
	})
	t.Run("routes", func(t *testing.T) {
		answersDecodedFewAtATime(t, func(rt http.RoundTripper) QueryFunc {
			c, err := newClient("http://prometheus.invalid", &http.Client{Transport: rt}, 15*time.Second, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			return byRoute(c.QueryRoutes, "free")
		})
	})
	t.Run("both paths of one client", func(t *testing.T) {
		answersDecodedFewAtATime(t, func(rt http.RoundTripper) QueryFunc {
			c, err := newClient("http://prometheus.invalid", &http.Client{Transport: rt}, 15*time.Second, 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			routes := byRoute(c.QueryRoutes, "free")
			var calls atomic.Int32
			return func(ctx context.Context, q string, at time.Time) (model.Vector, error) {
				if calls.Add(1)%2 == 0 {
					return c.Query(ctx, q, at)
				}
				return routes(ctx, q, at)
			}
		})
	})
}

func answersDecodedFewAtATime(t *testing.T, newQuery func(http.RoundTripper) QueryFunc) {
	const n = 6
	if maxDecoding >= n {
		t.Fatalf("the test needs more queries than the bound %d", maxDecoding)
	}
	var arrived, reading, peak atomic.Int32
	answered := make(chan struct{})
	gate := make(chan struct{})
	prom := roundTripperFunc(func(req *http.Request) (*http.Response, error) {
		arrived.Add(1)
		<-answered
		body := `{"status":"success","data":{"resultType":"vector","result":[{"metric":{"route":"free"},"value":[1700000000,"0.5"]}]}}`
		return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"application/json"}},
			Body: &gatedBody{Reader: strings.NewReader(body), gate: gate, reading: &reading, peak: &peak}, Request: req}, nil
	})
	query := newQuery(slotBodies(prom))

	errs := make(chan error, n)
	for i := range n {
		go func() {
			vec, err := query(context.Background(), fmt.Sprintf("q%d", i), time.Unix(1_700_000_000, 0))
			if err == nil && (len(vec) != 1 || vec[0].Value != 0.5) {
				err = fmt.Errorf("q%d answered %v", i, vec)
			}
			errs <- err
		}()
	}
	testenv.Eventually(t, 10*time.Second, "every query waiting for Prometheus at once", func() bool { return arrived.Load() == n })
	close(answered)
	for i := range n {
		want := int32(min(maxDecoding, n-i))
		testenv.Eventually(t, 10*time.Second, fmt.Sprintf("%d answers read at once", want), func() bool { return reading.Load() == want })
		gate <- struct{}{}
	}
	for range n {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if p := peak.Load(); p > maxDecoding {
		t.Errorf("%d answers read at once, want at most %d", p, maxDecoding)
	}
}
