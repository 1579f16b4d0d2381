package nginx

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/internal/testenv"
)

// testNginx is a real nginx master (daemon off, one worker) run from its
// own prefix under t.TempDir(). Its http block includes hermes/*.conf (the
// actuator's files) and extra/*.conf (for breaking it), and proxies / to
// the upstream named hermes_chat. proxy_pass goes through a variable so
// that nginx starts before any upstream exists.
type testNginx struct {
	t       *testing.T
	bin     string
	dir     string // prefix; nginx.conf, hermes/, extra/
	conf    string
	errLog  string
	pidFile string
	addr    string // 127.0.0.1:port
	proc    *testenv.Process
	client  *http.Client
}

func startNginx(t *testing.T) *testNginx {
	t.Helper()
	n := configureNginx(t, "set $backend hermes_chat;\n            proxy_pass http://$backend;")
	n.start()
	return n
}

// configureNginx writes the configuration of a testNginx whose location /
// is proxy, without starting it.
func configureNginx(t *testing.T, proxy string) *testNginx {
	t.Helper()
	bin := testenv.Binary(t, "nginx")
	dir := t.TempDir()
	n := &testNginx{
		t:       t,
		bin:     bin,
		dir:     dir,
		conf:    filepath.Join(dir, "nginx.conf"),
		errLog:  filepath.Join(dir, "error.log"),
		pidFile: filepath.Join(dir, "nginx.pid"),
		addr:    testenv.FreeAddr(t),
		client:  &http.Client{Timeout: 5 * time.Second},
	}
	n.conf = testenv.NginxConf(t, dir, n.addr, proxy, "hermes/*.conf", "extra/*.conf")
	return n
}

// start starts the nginx master and waits until it listens.
func (n *testNginx) start() {
	n.t.Helper()
	n.proc = testenv.StartNginx(n.t, n.bin, n.dir, n.conf, n.errLog, n.addr)
	n.t.Cleanup(n.stop)
}

// stop asks the master to quit gracefully (SIGQUIT), then kills it.
func (n *testNginx) stop() {
	n.client.CloseIdleConnections()
	if err := n.proc.Stop(); err != nil {
		n.t.Log(err)
	}
	if n.t.Failed() {
		n.t.Logf("nginx error log:\n%s", n.log())
	}
}

func (n *testNginx) log() string {
	data, _ := os.ReadFile(n.errLog)
	return string(data)
}

// options configures an actuator for this nginx; -e keeps nginx's
// start-up messages out of /var/log.
func (n *testNginx) options() map[string]any {
	return map[string]any{
		"include_path": filepath.Join(n.dir, "hermes", "{service}.conf"),
		"nginx_binary": n.bin,
		"prefix":       n.dir,
		"config_file":  n.conf,
		"test_args":    []any{"-t", "-q", "-e", n.errLog},
		"reload_args":  []any{"-s", "reload", "-e", n.errLog},
	}
}

// reloads counts the reload signals the master has received.
func (n *testNginx) reloads() int {
	return strings.Count(n.log(), "(SIGHUP) received")
}

// workers lists the live children of the master.
func (n *testNginx) workers() []int {
	entries, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces.
		i := bytes.LastIndexByte(data, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(data[i+1:]))
		if len(f) < 2 || f[0] == "Z" {
			continue
		}
		if ppid, _ := strconv.Atoi(f[1]); ppid == n.proc.Pid() {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitReloaded waits until the master runs a single worker that is not one
// of before: the reload is then in effect for every new connection.
func (n *testNginx) waitReloaded(before []int) {
	n.t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		w := n.workers()
		if len(w) == 1 && !slices.Contains(before, w[0]) {
			n.client.CloseIdleConnections()
			return
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("nginx reload not effective after 30s: workers %v, before %v\n%s", w, before, n.log())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitReloads waits until the master has started at least want reloads.
func (n *testNginx) waitReloads(want int) bool {
	deadline := time.Now().Add(30 * time.Second)
	for n.reloads() < want {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

// split sends count requests through nginx and counts the answers (each
// upstream answers its route's name).
func (n *testNginx) split(count int) map[string]int {
	n.t.Helper()
	got := map[string]int{}
	for range count {
		resp, err := n.client.Get("http://" + n.addr + "/")
		if err != nil {
			n.t.Fatalf("GET through nginx: %v", err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil || resp.StatusCode != http.StatusOK {
			n.t.Fatalf("GET through nginx: %s %q %v\n%s", resp.Status, body, err, n.log())
		}
		got[string(body)]++
	}
	return got
}

// routeServer starts an HTTP server on 127.0.0.1 that answers route.
func routeServer(t *testing.T, route string) string {
	t.Helper()
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, route)
	}))
	t.Cleanup(s.Close)
	return s.Listener.Addr().String()
}
