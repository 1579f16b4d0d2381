package proxy

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/hermes-failover/hermes/internal/testenv"
)

const secret = "sk-live-DO-NOT-LEAK-4f3a9c"

// seen is what an upstream received.
type seen struct {
	mu   sync.Mutex
	reqs []*http.Request
}

func (s *seen) last() *http.Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reqs[len(s.reqs)-1]
}

// echoUpstream answers every request with a healthy completion and keeps
// what it received.
func echoUpstream(t *testing.T) (string, *seen) {
	s := &seen{}
	base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		s.mu.Lock()
		s.reqs = append(s.reqs, r)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Upstream", "yes")
		fmt.Fprint(w, `{"choices":[{"index":0,"message":{"role":"assistant","content":"Hello there."},"finish_reason":"stop"}]}`)
	}))
	return base, s
}

// scrape is reg's /metrics page.
func scrape(t *testing.T, reg *prometheus.Registry) string {
	t.Helper()
	h := promhttp.HandlerFor(reg, promhttp.HandlerOpts{})
	resp, err := http.Get(serve(t, h))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return string(b)
}

// waitSeries waits until reg's /metrics page has the line: the middleware
// records once the handler has returned, which may be just after the
// client has the whole reply.
func waitSeries(t *testing.T, reg *prometheus.Registry, line string) {
	t.Helper()
	testenv.EventuallyDetail(t, testLimits.TotalTimeout, line, func() (bool, string) {
		page := scrape(t, reg)
		return strings.Contains(page, line+"\n"), page
	})
}

// holdingUpstream sends a stream's first event, then holds the rest until
// release is closed or its caller goes away, which it reports on gone.
func holdingUpstream(t *testing.T) (base string, release, gone chan struct{}) {
	release, gone = make(chan struct{}), make(chan struct{}, 1)
	base = serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "text/event-stream")
		fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"},\"finish_reason\":null}]}\n\n")
		http.NewResponseController(w).Flush()
		select {
		case <-release:
			fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\" there, how can I help?\"},\"finish_reason\":\"stop\"}]}\n\n")
			fmt.Fprint(w, "data: [DONE]\n\n")
		case <-r.Context().Done():
			gone <- struct{}{}
		}
	}))
	return base, release, gone
}
