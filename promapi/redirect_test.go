package promapi

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	commoncfg "github.com/prometheus/common/config"

	"github.com/hermes-failover/hermes/rules/config"
)

// headerLog records the secrets a server was sent.
type headerLog struct {
	mu   sync.Mutex
	seen []string // "path key=… auth=…" per request
}

func (l *headerLog) add(r *http.Request) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.seen = append(l.seen, r.URL.Path+" key="+r.Header.Get("X-Api-Key")+" auth="+r.Header.Get("Authorization"))
}

func (l *headerLog) all() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.seen, "\n")
}

// TestRedirectToAnotherHostCarriesNoSecrets: the query client sent its
// http_headers (X-Api-Key) to whatever host a redirect named (issue 31,
// item 11). Prometheus at 127.0.0.1 redirects to one at localhost (another
// host name, so another host, as for net/http): the second gets neither
// the header nor the basic_auth credentials. A redirect on the same host
// keeps them.
func TestRedirectToAnotherHostCarriesNoSecrets(t *testing.T) {
	var other headerLog
	answer := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"success","data":{"resultType":"vector","result":[]}}`))
	}
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		other.add(r)
		answer(w)
	}))
	defer elsewhere.Close()
	otherURL := strings.Replace(elsewhere.URL, "127.0.0.1", "localhost", 1)

	var first headerLog
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		first.add(r)
		switch r.URL.Path {
		case "/away/api/v1/query":
			http.Redirect(w, r, otherURL+"/api/v1/query", http.StatusTemporaryRedirect)
		case "/here/api/v1/query":
			http.Redirect(w, r, "/api/v1/query", http.StatusTemporaryRedirect)
		default:
			answer(w)
		}
	}))
	defer prom.Close()

	for _, c := range []struct {
		prefix    string
		first     string // what the first server saw
		elsewhere string // what the server at localhost saw
	}{
		{"/here", "/here/api/v1/query key=s3cret auth=Basic aGVybWVzOnB3\n/api/v1/query key=s3cret auth=Basic aGVybWVzOnB3", ""},
		{"/away", "/away/api/v1/query key=s3cret auth=Basic aGVybWVzOnB3", "/api/v1/query key= auth="},
	} {
		first.seen, other.seen = nil, nil
		hc := commoncfg.DefaultHTTPClientConfig
		hc.HTTPHeaders = &commoncfg.Headers{Headers: map[string]commoncfg.Header{"X-Api-Key": {Secrets: []commoncfg.Secret{"s3cret"}}}}
		hc.BasicAuth = &commoncfg.BasicAuth{Username: "hermes", Password: "pw"}
		cfg := config.PrometheusConfig{URL: prom.URL + c.prefix, HTTPClient: hc}
		cl, err := New(cfg, 5*time.Second, nil)
		if err != nil {
			t.Fatal(err)
		}
		// A deadline, so that a query waiting for a decode slot a redirect
		// leaked fails rather than hangs (two redirected queries took
		// both slots for good).
		ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
		defer cancel()
		if _, err := cl.Query(ctx, "up", time.Unix(1e9, 0)); err != nil {
			t.Fatalf("%s: query: %v", c.prefix, err)
		}
		// The streamed path (ticks) goes through the same transport.
		a := newAnswer(newRoutePositions([]string{"free"}), true, nil)
		if err := cl.QueryRoutes(ctx, "up", time.Unix(1e9, 0), a); err != nil {
			t.Fatalf("%s: QueryRoutes: %v", c.prefix, err)
		}
		cl.CloseIdleConnections()
		wantFirst := c.first + "\n" + c.first
		wantElsewhere := c.elsewhere
		if wantElsewhere != "" {
			wantElsewhere += "\n" + c.elsewhere
		}
		if got := first.all(); got != wantFirst {
			t.Errorf("%s: the first server saw\n%s\nwant\n%s", c.prefix, got, wantFirst)
		}
		if got := other.all(); got != wantElsewhere {
			t.Errorf("%s: the other host saw\n%s\nwant\n%s", c.prefix, got, wantElsewhere)
		}
	}
}

// TestFollowRedirectsFalse: with http_config.follow_redirects: false no
// redirect is followed, by either path or by NewAPI's client; before,
// client_golang's own http.Client followed them whatever the setting.
func TestFollowRedirectsFalse(t *testing.T) {
	var other headerLog
	elsewhere := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { other.add(r) }))
	defer elsewhere.Close()
	prom := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, elsewhere.URL+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer prom.Close()
	hc := commoncfg.DefaultHTTPClientConfig
	hc.FollowRedirects = false
	cfg := config.PrometheusConfig{URL: prom.URL, HTTPClient: hc}
	cl, err := New(cfg, 5*time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cl.Query(t.Context(), "up", time.Unix(1e9, 0)); err == nil {
		t.Error("Query: a redirect answered, want an error")
	}
	if err := cl.QueryRoutes(t.Context(), "up", time.Unix(1e9, 0), newAnswer(newRoutePositions([]string{"free"}), true, nil)); err == nil {
		t.Error("QueryRoutes: a redirect answered, want an error")
	}
	api, err := NewAPI(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := api.Query(t.Context(), "up", time.Unix(1e9, 0)); err == nil {
		t.Error("API: a redirect answered, want an error")
	}
	if got := other.all(); got != "" {
		t.Errorf("the redirect was followed:\n%s", got)
	}
}
