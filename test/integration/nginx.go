package integration

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/internal/testenv"
)

// Nginx is a real nginx master (daemon off, one worker, so weighted round
// robin splits exactly) in front of one HTTP server per route of the test
// chain, each answering its route's name. Its http block includes the
// nginx actuator's files from Dir/hermes and proxies / to hermes_chat.
type Nginx struct {
	Dir        string
	Addr       string // where nginx proxies to the routes
	StateAddr  string // the actuator's state_listen
	bin        string
	conf       string
	errLog     string
	routeAddrs map[string]string
	proc       *testenv.Process
	client     *http.Client

	// Binary, when set before Actuator, is the nginx_binary the actuator
	// runs instead of nginx (a wrapper that injects a fault).
	Binary string
}

// NewNginx writes an nginx configuration and starts the route servers; it
// does not start nginx, which needs the include files first (Start).
func NewNginx(t testing.TB) *Nginx {
	t.Helper()
	bin := testenv.Binary(t, "nginx")
	dir := t.TempDir()
	n := &Nginx{
		Dir: dir, Addr: testenv.FreeAddr(t), StateAddr: testenv.FreeAddr(t),
		bin: bin, conf: filepath.Join(dir, "nginx.conf"), errLog: filepath.Join(dir, "error.log"),
		routeAddrs: map[string]string{},
		client:     &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}},
	}
	for _, route := range Routes {
		s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { io.WriteString(w, route) }))
		t.Cleanup(s.Close)
		n.routeAddrs[route] = s.Listener.Addr().String()
	}
	n.conf = testenv.NginxConf(t, dir, n.Addr, "proxy_pass http://hermes_chat;", "hermes/*.conf")
	return n
}

// Actuator is the nginx actuator's entry for the test policy
// (ConfigOptions.Actuators), with state_listen.
func (n *Nginx) Actuator() string {
	var b strings.Builder
	fmt.Fprintf(&b, "  - type: nginx\n    include_path: %s\n    upstreams:\n      chat:\n", filepath.Join(n.Dir, "hermes", "{service}.conf"))
	for _, route := range Routes {
		fmt.Fprintf(&b, "        %s: [%s]\n", route, n.routeAddrs[route])
	}
	bin := n.bin
	if n.Binary != "" {
		bin = n.Binary
	}
	fmt.Fprintf(&b, "    nginx_binary: %s\n    prefix: %s\n    config_file: %s\n", bin, n.Dir, n.conf)
	fmt.Fprintf(&b, "    test_args: [-t, -q, -e, %s]\n    reload_args: [-s, reload, -e, %s]\n", n.errLog, n.errLog)
	fmt.Fprintf(&b, "    command_timeout: 5s\n    state_listen: %s\n", n.StateAddr)
	return b.String()
}

// Start starts the nginx master, once the include files exist, and
// waits until it listens; it is stopped by its PID when t ends.
func (n *Nginx) Start(t testing.TB) {
	t.Helper()
	n.proc = testenv.StartNginx(t, n.bin, n.Dir, n.conf, n.errLog, n.Addr)
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("--- nginx error log:\n%s", testenv.Tail(n.errLog, 30))
		}
	})
}

// Route sends one request through nginx and returns the route that
// answered it.
func (n *Nginx) Route() (string, error) {
	resp, err := n.client.Get("http://" + n.Addr + "/")
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("GET through nginx: %s %q", resp.Status, body)
	}
	return string(body), nil
}

// Served is what nginx answers on the actuator's state_listen for the
// test service: the split its workers run and who wrote it.
type Served struct {
	Weights map[string]int `json:"weights"`
	Writer  struct {
		Replica string    `json:"replica"`
		Tick    time.Time `json:"tick"`
	} `json:"writer"`
}

func (s Served) String() string {
	return fmt.Sprintf("%v by %q at %s", s.Weights, s.Writer.Replica, s.Writer.Tick.Format("15:04:05"))
}

// Served asks nginx what it serves for the test service.
func (n *Nginx) Served() (Served, error) {
	var s Served
	req, err := http.NewRequest(http.MethodGet, "http://"+n.StateAddr+"/hermes-state", nil)
	if err != nil {
		return s, err
	}
	req.Host = "hermes-state.hermes_" + Service
	resp, err := n.client.Do(req)
	if err != nil {
		return s, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return s, fmt.Errorf("nginx state: %s", resp.Status)
	}
	return s, json.NewDecoder(resp.Body).Decode(&s)
}
