package alertmanager

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/alertmanager/api/v2/models"
	yaml "go.yaml.in/yaml/v3"
)

// shippedConfig is the example configuration under test.
const shippedConfig = "../../rules/alertmanager/alertmanager.yml"

// binary finds a program of the prometheus-alertmanager package: a test
// without it is skipped, except in CI, where it fails.
func binary(t *testing.T, name string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		msg := fmt.Sprintf("%s not found (apt-get install -y prometheus-alertmanager)", name)
		if os.Getenv("CI") == "true" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
	return path
}

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
	cmd                        *exec.Cmd
	exited                     chan struct{}
	log                        *os.File
}

func freePort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// startAlertmanager starts Alertmanager on a free loopback port, without
// clustering, and waits until it is ready. t.Cleanup stops it by PID.
func startAlertmanager(t *testing.T, bin, config string) *alertmanager {
	t.Helper()
	dir := t.TempDir()
	am := &alertmanager{bin: bin, config: config, storage: filepath.Join(dir, "data"), addr: freePort(t)}
	am.URL = "http://" + am.addr
	log, err := os.Create(filepath.Join(dir, "alertmanager.log"))
	if err != nil {
		t.Fatal(err)
	}
	am.log = log
	t.Cleanup(func() {
		am.stop(t)
		log.Close()
		if t.Failed() {
			if data, err := os.ReadFile(log.Name()); err == nil {
				t.Logf("alertmanager log:\n%s", tail(string(data), 60))
			}
		}
	})
	am.start(t)
	return am
}

func (am *alertmanager) start(t *testing.T) {
	t.Helper()
	am.cmd = exec.Command(am.bin,
		"--config.file="+am.config,
		"--storage.path="+am.storage,
		"--web.listen-address="+am.addr,
		"--cluster.listen-address=",
		"--log.level=debug",
	)
	am.cmd.Stdout, am.cmd.Stderr = am.log, am.log
	if err := am.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	am.exited = exited
	go func(cmd *exec.Cmd) { _ = cmd.Wait(); close(exited) }(am.cmd)
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp, err := http.Get(am.URL + "/-/ready")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		select {
		case <-exited:
			t.Fatalf("alertmanager exited at start-up (pid %d)", am.cmd.Process.Pid)
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("alertmanager not ready on %s after 30s", am.addr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// stop ends the process by its PID: SIGTERM (Alertmanager then writes its
// notification log and silences to storage), SIGKILL after 10 s.
func (am *alertmanager) stop(t *testing.T) {
	if am.cmd == nil || am.cmd.Process == nil {
		return
	}
	pid := am.cmd.Process.Pid
	select {
	case <-am.exited:
		return
	default:
	}
	_ = syscall.Kill(pid, syscall.SIGTERM)
	select {
	case <-am.exited:
	case <-time.After(10 * time.Second):
		t.Logf("alertmanager (pid %d) ignored SIGTERM; killing it", pid)
		_ = syscall.Kill(pid, syscall.SIGKILL)
		<-am.exited
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

func tail(s string, lines int) string {
	l := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(l) > lines {
		l = l[len(l)-lines:]
	}
	return strings.Join(l, "\n")
}
