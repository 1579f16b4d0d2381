package integration

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
)

// QueryProxy sits between Hermes and its query engine. It forwards every
// request, and can hold back the queries that contain a given text, the way
// an overloaded engine answers one expensive query late. When the engine is
// down it drops the connection, as the engine itself would.
type QueryProxy struct {
	URL string

	mu        sync.Mutex
	slowMatch string
	slowFor   time.Duration
	delayed   int
}

// StartQueryProxy starts a proxy on 127.0.0.1 in front of upstream.
func StartQueryProxy(t testing.TB, upstream string) *QueryProxy {
	t.Helper()
	u, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	p := &QueryProxy{}
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		if r.Context().Err() != nil {
			return
		}
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, herr := hj.Hijack(); herr == nil {
				c.Close()
				return
			}
		}
		http.Error(w, err.Error(), http.StatusBadGateway)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		query := r.URL.Query().Get("query")
		if form, err := url.ParseQuery(string(body)); err == nil && form.Get("query") != "" {
			query = form.Get("query")
		}
		if d := p.delay(query); d > 0 {
			select {
			case <-time.After(d):
			case <-r.Context().Done():
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	p.URL = srv.URL
	t.Cleanup(srv.Close)
	return p
}

// SlowQueries holds back every query containing match by d; an empty match
// stops it.
func (p *QueryProxy) SlowQueries(match string, d time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.slowMatch, p.slowFor = match, d
}

// Delayed is how many queries the proxy held back.
func (p *QueryProxy) Delayed() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.delayed
}

func (p *QueryProxy) delay(query string) time.Duration {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.slowMatch == "" || !strings.Contains(query, p.slowMatch) {
		return 0
	}
	p.delayed++
	return p.slowFor
}
