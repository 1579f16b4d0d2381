package promapi

import (
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/rules/config"
)

// TestCloseIdleConnectionsClosesThem: a client a reload replaced, and the
// API client each status page builds for its history, must not keep their
// keep-alive connections (issue 31, item 8). After CloseIdleConnections,
// the server sees every connection the client opened closed.
func TestCloseIdleConnectionsClosesThem(t *testing.T) {
	var mu sync.Mutex
	open := map[net.Conn]bool{}
	changed := sync.NewCond(&mu)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[]}}`))
	}))
	srv.Config.ConnState = func(c net.Conn, s http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch s {
		case http.StateNew:
			open[c] = true
		case http.StateClosed, http.StateHijacked:
			delete(open, c)
		}
		changed.Broadcast()
	}
	srv.Start()
	defer srv.Close()
	// waitClosed waits until the server holds no connection; the test's
	// deadline bounds it.
	waitClosed := func() {
		mu.Lock()
		defer mu.Unlock()
		for len(open) > 0 {
			changed.Wait()
		}
	}
	opened := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(open)
	}
	cfg := config.PrometheusConfig{URL: srv.URL}
	cfg.HTTPClient.FollowRedirects = true

	c, err := New(cfg, 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Query(t.Context(), "up", time.Unix(1e9, 0)); err != nil {
		t.Fatal(err)
	}
	if opened() == 0 {
		t.Fatal("the query left no connection open: nothing to test")
	}
	c.CloseIdleConnections()
	waitClosed()

	api, err := NewAPI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := api.Query(t.Context(), "up", time.Unix(1e9, 0)); err != nil {
		t.Fatal(err)
	}
	if opened() == 0 {
		t.Fatal("the query left no connection open: nothing to test")
	}
	api.CloseIdleConnections()
	waitClosed()
}
