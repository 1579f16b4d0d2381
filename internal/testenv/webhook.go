package testenv

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Webhook is the webhook of Alertmanager's receivers, in the test process:
// it records every notification.
type Webhook struct {
	URL string

	mu  sync.Mutex
	got []Notification
}

// NewWebhook starts a webhook that runs until the end of t.
func NewWebhook(t testing.TB) *Webhook {
	w := &Webhook{}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		var n Notification
		if err := json.NewDecoder(r.Body).Decode(&n); err != nil {
			http.Error(rw, err.Error(), http.StatusBadRequest)
			return
		}
		n.Received = time.Now()
		for i := range n.Alerts {
			n.Alerts[i].Received = n.Received
		}
		w.mu.Lock()
		w.got = append(w.got, n)
		w.mu.Unlock()
		t.Logf("webhook: %s", n)
	}))
	w.URL = srv.URL
	t.Cleanup(srv.Close)
	return w
}

// Notification is one webhook message from Alertmanager.
type Notification struct {
	Receiver string          `json:"receiver"`
	Status   string          `json:"status"` // of the group: firing or resolved
	Alerts   []NotifiedAlert `json:"alerts"`
	Received time.Time       `json:"-"`
}

// NotifiedAlert is one alert of a Notification.
type NotifiedAlert struct {
	Status       string            `json:"status"` // firing or resolved
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	GeneratorURL string            `json:"generatorURL"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt"`
	Received     time.Time         `json:"-"` // the notification's
}

// String shows when the notification came, to whom, and each alert's name,
// level and route labels (those it has) and status.
func (n Notification) String() string {
	var parts []string
	for _, a := range n.Alerts {
		var ls []string
		for _, k := range []string{"level", "route"} {
			if v, ok := a.Labels[k]; ok {
				ls = append(ls, k+"="+v)
			}
		}
		parts = append(parts, fmt.Sprintf("%s{%s}=%s", a.Labels["alertname"], strings.Join(ls, ","), a.Status))
	}
	return fmt.Sprintf("%s %s %s: %s", n.Received.Format("15:04:05.000"), n.Receiver, n.Status, strings.Join(parts, " "))
}

func (a NotifiedAlert) String() string {
	return fmt.Sprintf("%s %s (starts %s, ends %s)", a.Received.Format("15:04:05.000"), a.Status,
		a.StartsAt.UTC().Format("15:04:05.000"), a.EndsAt.UTC().Format("15:04:05.000"))
}

// Notifications returns what receiver got so far, oldest first.
func (w *Webhook) Notifications(receiver string) []Notification {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.DeleteFunc(slices.Clone(w.got), func(n Notification) bool { return n.Receiver != receiver })
}

// First returns the first notification to receiver that holds an alert
// for which match is true, and whether there is one.
func (w *Webhook) First(receiver string, match func(NotifiedAlert) bool) (Notification, bool) {
	for _, n := range w.Notifications(receiver) {
		if slices.ContainsFunc(n.Alerts, match) {
			return n, true
		}
	}
	return Notification{}, false
}

// Alerts lists, oldest first, the alerts for which match is true in every
// notification to receiver.
func (w *Webhook) Alerts(receiver string, match func(NotifiedAlert) bool) []NotifiedAlert {
	var out []NotifiedAlert
	for _, n := range w.Notifications(receiver) {
		for _, a := range n.Alerts {
			if match(a) {
				out = append(out, a)
			}
		}
	}
	return out
}
