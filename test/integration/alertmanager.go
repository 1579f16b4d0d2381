package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/internal/testenv"
)

// Alertmanager is a real prometheus-alertmanager (Debian's package), without
// clustering, whose one receiver is a webhook in the test process.
type Alertmanager struct {
	// URL is its base URL, for Hermes's alerting.alertmanagers.
	URL string
	// Hooks records what it notified.
	Hooks *Webhook

	proc *testenv.Process
}

// alertmanagerConfig routes every alert to the webhook, one group per
// alert, with timers of a second so that notifications follow the alerts
// closely; repeat_interval keeps a firing alert from being notified again.
const alertmanagerConfig = `route:
  receiver: hermes
  group_by: [alertname, service, route]
  group_wait: 1s
  group_interval: 1s
  repeat_interval: 1h
receivers:
  - name: hermes
    webhook_configs:
      - url: %s
        send_resolved: true
`

// StartAlertmanager starts Alertmanager on a free loopback port and waits
// until it is ready. It runs until the end of t.
func StartAlertmanager(t testing.TB) *Alertmanager {
	t.Helper()
	bin := testenv.Binary(t, "prometheus-alertmanager")
	hooks := newWebhook(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "alertmanager.yml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, alertmanagerConfig, hooks.URL), 0o644); err != nil {
		t.Fatal(err)
	}
	addr := testenv.FreeAddr(t)
	cmd := exec.Command(bin,
		"--config.file="+cfg,
		"--storage.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--cluster.listen-address=",
		"--log.level=debug",
	)
	am := &Alertmanager{URL: "http://" + addr, Hooks: hooks}
	am.proc = testenv.Start(t, "alertmanager", cmd)
	testenv.WaitHTTP(t, am.URL+"/-/ready", 30*time.Second, am.proc)
	return am
}

// AMAlert is an alert as Alertmanager's GET /api/v2/alerts shows it.
type AMAlert struct {
	Labels       map[string]string `json:"labels"`
	Annotations  map[string]string `json:"annotations"`
	GeneratorURL string            `json:"generatorURL"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt"`
	Status       struct {
		State string `json:"state"` // active, suppressed or unprocessed
	} `json:"status"`
}

func (a AMAlert) String() string {
	return fmt.Sprintf("%s %v %s starts %s ends %s (%s)", a.Labels["alertname"], a.Labels, a.Status.State,
		a.StartsAt.UTC().Format(time.RFC3339), a.EndsAt.UTC().Format(time.RFC3339), a.GeneratorURL)
}

// Alerts returns the alerts named alertname that Alertmanager holds and
// that have not resolved (resolved alerts are not listed).
func (am *Alertmanager) Alerts(t testing.TB, alertname string) []AMAlert {
	t.Helper()
	q := url.Values{"filter": {fmt.Sprintf("alertname=%q", alertname)}}
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(am.URL + "/api/v2/alerts?" + q.Encode())
	if err != nil {
		t.Fatalf("GET /api/v2/alerts: %v", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v2/alerts: %s %v\n%s", resp.Status, err, b)
	}
	var out []AMAlert
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("decoding /api/v2/alerts: %v\n%s", err, b)
	}
	return out
}

// Notification is one webhook message from Alertmanager.
type Notification struct {
	Status   string          `json:"status"` // of the group: firing or resolved
	Alerts   []NotifiedAlert `json:"alerts"`
	Received time.Time       `json:"-"`
}

// NotifiedAlert is one alert of a Notification.
type NotifiedAlert struct {
	Status       string            `json:"status"` // firing or resolved
	Labels       map[string]string `json:"labels"`
	GeneratorURL string            `json:"generatorURL"`
	StartsAt     time.Time         `json:"startsAt"`
	EndsAt       time.Time         `json:"endsAt"`
	Received     time.Time         `json:"-"` // the notification's
}

func (n Notification) String() string {
	var parts []string
	for _, a := range n.Alerts {
		parts = append(parts, fmt.Sprintf("%s{route=%s}=%s", a.Labels["alertname"], a.Labels["route"], a.Status))
	}
	return fmt.Sprintf("%s %s: %s", n.Received.Format("15:04:05.000"), n.Status, strings.Join(parts, " "))
}

func (a NotifiedAlert) String() string {
	return fmt.Sprintf("%s %s (starts %s, ends %s)", a.Received.Format("15:04:05.000"), a.Status,
		a.StartsAt.UTC().Format("15:04:05.000"), a.EndsAt.UTC().Format("15:04:05.000"))
}

// Webhook is the receiver's webhook: it records every notification.
type Webhook struct {
	URL string

	mu  sync.Mutex
	got []Notification
}

func newWebhook(t testing.TB) *Webhook {
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

// Notifications returns what the webhook got so far, oldest first.
func (w *Webhook) Notifications() []Notification {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]Notification(nil), w.got...)
}

// Alert lists, oldest first, the alert named alertname for route in every
// notification that held it.
func (w *Webhook) Alert(alertname, route string) []NotifiedAlert {
	var out []NotifiedAlert
	for _, n := range w.Notifications() {
		for _, a := range n.Alerts {
			if a.Labels["alertname"] == alertname && a.Labels["route"] == route {
				out = append(out, a)
			}
		}
	}
	return out
}
