package probe

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// stubAPI answers in memory, healthy, and counts calls per path; the
// scheduler test needs no network inside its bubble.
type stubAPI struct {
	mu    sync.Mutex
	calls map[string]int
}

func (s *stubAPI) Do(req *http.Request) (*http.Response, error) {
	s.mu.Lock()
	s.calls[req.URL.Path]++
	s.mu.Unlock()
	body := `{"choices":[{"index":0,"message":{"role":"assistant","content":"{\"city\": \"Paris\", \"country\": \"France\"} is the answer to that."},"finish_reason":"stop"}],"usage":{"total_tokens":10}}`
	header := http.Header{"Content-Type": {"application/json"}}
	switch {
	case strings.HasSuffix(req.URL.Path, "/models"):
		body = `{"data":[{"id":"fake-model"}]}`
	case req.Method == http.MethodGet:
		body = "ok"
	}
	return &http.Response{StatusCode: 200, Header: header, Body: io.NopCloser(strings.NewReader(body)), Request: req}, nil
}

func (s *stubAPI) count(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[path]
}

// TestRunSchedule runs the prober for ten (fake) minutes: each layer runs
// at start and then on its own interval.
func TestRunSchedule(t *testing.T) {
	cfg := testConfig(t, "http://probe.invalid", "    boundary: {disabled: true}\n    probes: [short_answer]\n")
	synctest.Test(t, func(t *testing.T) {
		api := &stubAPI{calls: map[string]int{}}
		p, err := New(cfg, prometheus.NewRegistry(), api, slog.New(slog.DiscardHandler))
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() { p.Run(ctx); close(done) }()
		time.Sleep(10*time.Minute - time.Second)
		synctest.Wait()
		// Intervals: liveness 30s, readiness 10s, e2e 1m; one run at 0s.
		for path, want := range map[string]int{"/v1": 20, "/v1/models": 60, "/v1/chat/completions": 10} {
			if got := api.count(path); got != want {
				t.Errorf("%s: %d calls in 10m, want %d", path, got, want)
			}
		}
		cancel()
		<-done
	})
}
