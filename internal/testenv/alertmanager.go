package testenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"path/filepath"
	"testing"
	"time"

	"github.com/prometheus/alertmanager/api/v2/models"
)

// Alertmanager is a real Alertmanager (Debian's prometheus-alertmanager)
// without clustering. [Server.Stop] and [Server.Start] restart it on the
// same address and storage (on SIGTERM it writes its notification log and
// silences there).
type Alertmanager struct {
	*Server
	// URL is its base URL.
	URL string
}

// StartAlertmanager starts Alertmanager with the configuration file config
// on a free loopback port and waits until it is ready. It runs until the
// end of t.
func StartAlertmanager(t testing.TB, config string) *Alertmanager {
	t.Helper()
	bin := Binary(t, "prometheus-alertmanager")
	dir := t.TempDir()
	addr := FreeAddr(t)
	am := &Alertmanager{URL: "http://" + addr}
	am.Server = NewServer(t, "alertmanager", dir, am.URL+"/-/ready", bin,
		"--config.file="+config,
		"--storage.path="+filepath.Join(dir, "data"),
		"--web.listen-address="+addr,
		"--cluster.listen-address=",
		"--log.level=debug",
	)
	am.Start(t)
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
		State       string   `json:"state"` // active, suppressed or unprocessed
		InhibitedBy []string `json:"inhibitedBy"`
		SilencedBy  []string `json:"silencedBy"`
	} `json:"status"`
}

func (a AMAlert) String() string {
	return fmt.Sprintf("%s %v %s starts %s ends %s (%s)", a.Labels["alertname"], a.Labels, a.Status.State,
		a.StartsAt.UTC().Format(time.RFC3339), a.EndsAt.UTC().Format(time.RFC3339), a.GeneratorURL)
}

// Alerts returns the alerts named alertname that Alertmanager holds
// (active, silenced and inhibited; resolved alerts are not listed).
func (am *Alertmanager) Alerts(t testing.TB, alertname string) []AMAlert {
	t.Helper()
	q := url.Values{"filter": {fmt.Sprintf("alertname=%q", alertname)}}
	b := am.do(t, http.MethodGet, "/api/v2/alerts?"+q.Encode(), nil)
	var out []AMAlert
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatalf("decoding GET /api/v2/alerts: %v\n%s", err, b)
	}
	return out
}

// PostAlerts sends alerts to Alertmanager, as Prometheus and Hermes do.
func (am *Alertmanager) PostAlerts(t testing.TB, alerts models.PostableAlerts) {
	t.Helper()
	body, err := json.Marshal(alerts)
	if err != nil {
		t.Fatal(err)
	}
	am.do(t, http.MethodPost, "/api/v2/alerts", body)
}

// do sends a request to the v2 API and returns the body of its 200 answer.
func (am *Alertmanager) do(t testing.TB, method, path string, body []byte) []byte {
	t.Helper()
	req, err := http.NewRequest(method, am.URL+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %s %v\n%s", method, path, resp.Status, err, b)
	}
	return b
}
