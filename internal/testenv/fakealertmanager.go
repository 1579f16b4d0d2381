package testenv

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/alertmanager/api/v2/models"
)

// FakeAlertmanager is an Alertmanager's POST /api/v2/alerts in the test
// process: it records the alerts it gets, and answers with the status
// codes queued by [NewFakeAlertmanager] (200 once they run out).
type FakeAlertmanager struct {
	*httptest.Server

	mu       sync.Mutex
	requests int
	posts    []models.PostableAlerts
	fail     []int
	hold     chan struct{} // when set, requests wait for it to close
}

// NewFakeAlertmanager starts a fake that runs until the end of t and
// answers its first requests with the status codes fail.
func NewFakeAlertmanager(t testing.TB, fail ...int) *FakeAlertmanager {
	f := &FakeAlertmanager{fail: fail}
	f.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/api/v2/alerts" || r.Header.Get("Content-Type") != "application/json" {
			http.Error(w, "unexpected request "+r.Method+" "+r.URL.Path, http.StatusNotFound)
			return
		}
		f.mu.Lock()
		hold := f.hold
		f.mu.Unlock()
		if hold != nil {
			<-hold
		}
		var alerts models.PostableAlerts
		if err := json.NewDecoder(r.Body).Decode(&alerts); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		f.mu.Lock()
		defer f.mu.Unlock()
		f.requests++
		if len(f.fail) > 0 {
			code := f.fail[0]
			f.fail = f.fail[1:]
			http.Error(w, fmt.Sprintf("failing with %d", code), code)
			return
		}
		f.posts = append(f.posts, alerts)
	}))
	t.Cleanup(f.Close)
	return f
}

// Hold makes requests wait, from now until release is called.
func (f *FakeAlertmanager) Hold() (release func()) {
	hold := make(chan struct{})
	f.mu.Lock()
	f.hold = hold
	f.mu.Unlock()
	return func() {
		f.mu.Lock()
		f.hold = nil
		f.mu.Unlock()
		close(hold)
	}
}

// Received returns every alert accepted, in order.
func (f *FakeAlertmanager) Received() []*models.PostableAlert {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*models.PostableAlert
	for _, p := range f.posts {
		out = append(out, p...)
	}
	return out
}

// Names returns the alertname of every alert accepted, in order, joined
// by spaces.
func (f *FakeAlertmanager) Names() string {
	var names []string
	for _, a := range f.Received() {
		names = append(names, a.Labels["alertname"])
	}
	return strings.Join(names, " ")
}

// Count returns how many requests came, and how many were accepted.
func (f *FakeAlertmanager) Count() (requests, posts int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests, len(f.posts)
}
