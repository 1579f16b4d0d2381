package runner

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/actuators/file"
	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules"
)

// TestReloadsCloseTheOldPrometheusClient: each reload built a new
// Prometheus client and left the old one's keep-alive connections open,
// each with its goroutines, until Prometheus closed them: 120 reloads took
// Hermes from 20 goroutines to 500 (issue 31, item 8). Against a Prometheus
// API served by httptest, 60 reloads, each followed by a tick that queries
// through the new client, leave open only the connections the last
// client used, and the goroutine count, less three for each open
// connection, where it was.
//
// A tick's queries run at once, so how many connections a client opens
// depends on how they overlap: under load the live client may hold more
// than the first did. The test therefore waits for the conditions it
// means (the server's open connections are the live client's; then the
// goroutines not serving them are back to the count before), however
// long a loaded machine takes, rather than comparing raw counts.
func TestReloadsCloseTheOldPrometheusClient(t *testing.T) {
	conns := newConnTracker()
	prom := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conns.used(r.Context())
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[]}}`))
	}))
	prom.Config.ConnContext = conns.connContext
	prom.Config.ConnState = conns.connState
	prom.Start()
	defer prom.Close()
	dir := t.TempDir()
	cfg := strings.Replace(string(rules.DefaultYAML), "actuators: []", "actuators:\n  - type: file\n    path: "+filepath.Join(dir, "split.json"), 1)
	cfg = strings.Replace(cfg, "url: http://127.0.0.1:9090", "url: "+prom.URL, 1)
	cfgPath := filepath.Join(dir, "hermes.yaml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	kinds := &actuators.Registry{}
	file.Register(kinds)
	// NewQuery unset: the real Prometheus client (prometheusQueries).
	r, err := New(Options{ConfigPath: cfgPath, Registerer: prometheus.NewRegistry(), Actuators: kinds})
	if err != nil {
		t.Fatal(err)
	}
	ts := time.Now().Truncate(time.Minute)
	tick := func() {
		ts = ts.Add(15 * time.Second)
		r.tick(t.Context(), ts)
	}
	tick()
	tick()
	conns.onlyLive(t)
	before := goroutinesSettled(t, conns, -1)
	const reloads = 60
	for range reloads {
		conns.newClient()
		if err := r.reload(); err != nil {
			t.Fatal(err)
		}
		tick()
	}
	// One more reload and tick: the last client used is closed too.
	conns.newClient()
	if err := r.reload(); err != nil {
		t.Fatal(err)
	}
	tick()
	conns.onlyLive(t)
	// Each leaked client kept at least three goroutines (its connection's
	// read and write loops, the server's side), which onlyLive would have
	// caught; allow a few for timers.
	if after := goroutinesSettled(t, conns, before+5); after > before+5 {
		t.Errorf("goroutines less three per open connection went from %d to %d over %d reloads: something else the old clients started stays",
			before, after, reloads)
	}
}

// connTracker follows the connections of a test server (its ConnContext
// and ConnState hooks) and which of them were opened or served a request
// since the client last changed (newClient).
type connTracker struct {
	mu   sync.Mutex
	open map[net.Conn]bool // open connection → served a request since newClient
}

type connKey struct{}

func newConnTracker() *connTracker { return &connTracker{open: map[net.Conn]bool{}} }

func (c *connTracker) connContext(ctx context.Context, conn net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, conn)
}

func (c *connTracker) connState(conn net.Conn, s http.ConnState) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch s {
	case http.StateNew:
		// Only the live client opens connections after newClient (a
		// dial of an old one still under way is closed when it lands,
		// as the old transport closes newly idle connections), and the
		// transport may dial one more than its queries end up using.
		c.open[conn] = true
	case http.StateClosed, http.StateHijacked:
		delete(c.open, conn)
	}
}

// used marks the connection of a request's context as the live client's.
func (c *connTracker) used(ctx context.Context) {
	conn, _ := ctx.Value(connKey{}).(net.Conn)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.open[conn]; ok {
		c.open[conn] = true
	}
}

// newClient forgets which connections served requests: from now on only
// those the next client uses are live.
func (c *connTracker) newClient() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for conn := range c.open {
		c.open[conn] = false
	}
}

// counts returns how many connections are open and how many of them
// were neither opened nor used since newClient.
func (c *connTracker) counts() (open, stale int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, live := range c.open {
		if !live {
			stale++
		}
	}
	return len(c.open), stale
}

// onlyLive waits until every open connection served the live client:
// the old clients' connections were closed. A client that is never closed
// keeps them for its idle timeout (minutes), so a real leak fails here.
func (c *connTracker) onlyLive(t *testing.T) {
	t.Helper()
	testenv.EventuallyDetail(t, 30*time.Second, "only the live client's connections open", func() (bool, string) {
		open, stale := c.counts()
		return stale == 0, fmt.Sprintf("%d connections open, %d of them from earlier clients", open, stale)
	})
}

// goroutinesSettled waits until the goroutine count, less three for each
// connection open to the server c tracks (the client's read and write
// loops and the server's side), is at most want (want < 0: until it stops
// falling), as closed connections' goroutines take a moment to return; it
// gives up after 30 s and returns the count then.
func goroutinesSettled(t *testing.T, c *connTracker, want int) int {
	t.Helper()
	count := func() int {
		open, _ := c.counts()
		return runtime.NumGoroutine() - 3*open
	}
	deadline := time.Now().Add(30 * time.Second)
	n := count()
	for time.Now().Before(deadline) {
		runtime.Gosched()
		time.Sleep(20 * time.Millisecond) // polling a condition, not waiting out a time
		m := count()
		if want >= 0 && m <= want || want < 0 && m >= n {
			return m
		}
		n = m
	}
	return n
}
