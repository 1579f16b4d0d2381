package alertmanager

import (
	"bytes"
	"encoding/json"
	"fmt"
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

	"github.com/prometheus/alertmanager/api/v2/models"
	yaml "go.yaml.in/yaml/v3"

	"github.com/hermes-failover/hermes/internal/testenv"
)

// shippedConfig is the example configuration under test.
const shippedConfig = "../../rules/alertmanager/alertmanager.yml"

// timings replace the grouping timers of every route that sets them (and
// of the root route), so the test runs in minutes rather than hours.
type timings struct{ groupWait, groupInterval, repeatInterval string }

// testConfig writes a copy of the shipped configuration with every webhook
// URL pointed at hooks (path = receiver name) and the timers replaced.
func testConfig(t *testing.T, hooks string, tm timings) string {
	t.Helper()
	data, err := os.ReadFile(shippedConfig)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	webhooks := 0
	for _, r := range cfg["receivers"].([]any) {
		rcv := r.(map[string]any)
		for _, w := range asList(rcv["webhook_configs"]) {
			w.(map[string]any)["url"] = hooks + "/" + rcv["name"].(string)
			webhooks++
		}
	}
	if webhooks < 3 {
		t.Fatalf("the shipped configuration has %d webhook receivers, want pager, ticket and info", webhooks)
	}
	var walk func(route map[string]any, root bool)
	walk = func(route map[string]any, root bool) {
		for key, v := range map[string]string{"group_wait": tm.groupWait, "group_interval": tm.groupInterval, "repeat_interval": tm.repeatInterval} {
			if _, ok := route[key]; ok || root {
				route[key] = v
			}
		}
		for _, child := range asList(route["routes"]) {
			walk(child.(map[string]any), false)
		}
	}
	walk(cfg["route"].(map[string]any), true)
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "alertmanager.yml")
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

// notification is one webhook message, as Alertmanager sends it.
type notification struct {
	Receiver string `json:"receiver"`
	Status   string `json:"status"`
	Alerts   []struct {
		Status       string            `json:"status"`
		Labels       map[string]string `json:"labels"`
		Annotations  map[string]string `json:"annotations"`
		StartsAt     time.Time         `json:"startsAt"`
		EndsAt       time.Time         `json:"endsAt"`
		GeneratorURL string            `json:"generatorURL"`
	} `json:"alerts"`
	received time.Time
}

// collector is the receivers' webhook: it records the notifications each
// receiver got.
type collector struct {
	*httptest.Server
	mu  sync.Mutex
	got map[string][]notification
}

func newCollector(t *testing.T) *collector {
	c := &collector{got: map[string][]notification{}}
	c.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var n notification
		if err := json.NewDecoder(r.Body).Decode(&n); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		n.received = time.Now()
		name := strings.TrimPrefix(r.URL.Path, "/")
		c.mu.Lock()
		c.got[name] = append(c.got[name], n)
		c.mu.Unlock()
		t.Logf("webhook %s: %s %s", name, n.Status, n.summary())
	}))
	t.Cleanup(c.Close)
	return c
}

func (n notification) summary() string {
	var parts []string
	for _, a := range n.Alerts {
		parts = append(parts, fmt.Sprintf("%s{level=%s}=%s", a.Labels["alertname"], a.Labels["level"], a.Status))
	}
	return strings.Join(parts, " ")
}

func (c *collector) notifications(receiver string) []notification {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]notification(nil), c.got[receiver]...)
}

// first returns the first notification to receiver holding an alert named
// alertname in state status (with level, when not empty), and whether any.
func (c *collector) first(receiver, alertname, level, status string) (notification, bool) {
	for _, n := range c.notifications(receiver) {
		for _, a := range n.Alerts {
			if a.Labels["alertname"] == alertname && a.Status == status && (level == "" || a.Labels["level"] == level) {
				return n, true
			}
		}
	}
	return notification{}, false
}

// alertmanager is a running prometheus-alertmanager process.
type alertmanager struct {
	bin, config, storage, addr string
	URL                        string
	log                        string // one log for every start
	proc                       *testenv.Process
}

// startAlertmanager starts Alertmanager on a free loopback port, without
// clustering, and waits until it is ready. t.Cleanup stops it by PID.
func startAlertmanager(t *testing.T, bin, config string) *alertmanager {
	t.Helper()
	dir := t.TempDir()
	am := &alertmanager{bin: bin, config: config, storage: filepath.Join(dir, "data"), addr: testenv.FreeAddr(t),
		log: filepath.Join(dir, "alertmanager.log")}
	am.URL = "http://" + am.addr
	t.Cleanup(func() {
		am.stop(t)
		if t.Failed() {
			t.Logf("alertmanager log:\n%s", testenv.Tail(am.log, 60))
		}
	})
	am.start(t)
	return am
}

func (am *alertmanager) start(t *testing.T) {
	t.Helper()
	cmd := exec.Command(am.bin,
		"--config.file="+am.config,
		"--storage.path="+am.storage,
		"--web.listen-address="+am.addr,
		"--cluster.listen-address=",
		"--log.level=debug",
	)
	p, err := testenv.Launch("alertmanager", cmd, am.log)
	if err != nil {
		t.Fatal(err)
	}
	am.proc = p
	testenv.WaitHTTP(t, am.URL+"/-/ready", 30*time.Second, p)
}

// stop ends the process by its PID: SIGTERM (Alertmanager then writes its
// notification log and silences to storage), SIGKILL after 10 s.
func (am *alertmanager) stop(t *testing.T) {
	if am.proc == nil {
		return
	}
	if err := am.proc.Stop(); err != nil {
		t.Log(err)
	}
}

// alerts returns the alerts Alertmanager holds (active, silenced and
// inhibited; not resolved ones) named alertname.
func (am *alertmanager) alerts(t *testing.T, alertname string) models.GettableAlerts {
	t.Helper()
	q := url.Values{"filter": {fmt.Sprintf("alertname=%q", alertname)}}
	resp, err := http.Get(am.URL + "/api/v2/alerts?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(resp.Body); err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /api/v2/alerts: %s: %s", resp.Status, buf.String())
	}
	var out models.GettableAlerts
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatalf("decoding alerts: %v\n%s", err, buf.String())
	}
	return out
}

func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", within, what)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
