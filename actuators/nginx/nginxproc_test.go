package nginx

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// nginxBinary finds nginx: skipped outside CI when it is missing, fatal
// in CI (CI=true), where the real server is required.
func nginxBinary(t *testing.T) string {
	t.Helper()
	if p, err := exec.LookPath("nginx"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
		return "/usr/sbin/nginx"
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("nginx not found (apt-get install -y nginx); it is required when CI=true")
	}
	t.Skip("nginx not found; install it (apt-get install -y nginx) to run this test")
	return ""
}

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
	cmd     *exec.Cmd
	exited  chan struct{}
	stderr  bytes.Buffer
	client  *http.Client
}

func startNginx(t *testing.T) *testNginx {
	t.Helper()
	bin := nginxBinary(t)
	dir := t.TempDir()
	n := &testNginx{
		t:       t,
		bin:     bin,
		dir:     dir,
		conf:    filepath.Join(dir, "nginx.conf"),
		errLog:  filepath.Join(dir, "error.log"),
		pidFile: filepath.Join(dir, "nginx.pid"),
		addr:    freeAddr(t),
		exited:  make(chan struct{}),
		client:  &http.Client{Timeout: 5 * time.Second},
	}
	for _, d := range []string{"hermes", "extra", "tmp"} {
		if err := os.Mkdir(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	user := ""
	if os.Geteuid() == 0 {
		user = "user root;" // workers can reach the temp paths under t.TempDir()
	}
	conf := fmt.Sprintf(`daemon off;
master_process on;
worker_processes 1;
%[1]s
pid %[2]s/nginx.pid;
error_log %[2]s/error.log notice;
events { worker_connections 256; }
http {
    access_log off;
    client_body_temp_path %[2]s/tmp/client_body;
    proxy_temp_path %[2]s/tmp/proxy;
    fastcgi_temp_path %[2]s/tmp/fastcgi;
    uwsgi_temp_path %[2]s/tmp/uwsgi;
    scgi_temp_path %[2]s/tmp/scgi;
    include hermes/*.conf;
    include extra/*.conf;
    server {
        listen %[3]s;
        location / {
            set $backend hermes_chat;
            proxy_pass http://$backend;
        }
    }
}
`, user, dir, n.addr)
	if err := os.WriteFile(n.conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	n.cmd = exec.Command(bin, "-p", dir, "-c", n.conf, "-e", n.errLog)
	n.cmd.Stdout, n.cmd.Stderr = &n.stderr, &n.stderr
	if err := n.cmd.Start(); err != nil {
		t.Fatalf("starting nginx: %v", err)
	}
	go func() { n.cmd.Wait(); close(n.exited) }()
	t.Cleanup(n.stop)
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", n.addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		select {
		case <-n.exited:
			t.Fatalf("nginx exited at start-up: %s\n%s", n.stderr.String(), n.log())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx not listening on %s after 10s: %v\n%s", n.addr, err, n.log())
		}
		time.Sleep(10 * time.Millisecond)
	}
	return n
}

// stop asks the master to quit gracefully (SIGQUIT), then kills it.
func (n *testNginx) stop() {
	n.client.CloseIdleConnections()
	n.cmd.Process.Signal(syscall.SIGQUIT)
	select {
	case <-n.exited:
	case <-time.After(5 * time.Second):
		n.t.Logf("nginx did not quit within 5s; killing it")
		n.cmd.Process.Kill()
		<-n.exited
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
		if ppid, _ := strconv.Atoi(f[1]); ppid == n.cmd.Process.Pid {
			pids = append(pids, pid)
		}
	}
	return pids
}

// waitReloaded waits until the master runs a single worker that is not one
// of before: the reload is then in effect for every new connection.
func (n *testNginx) waitReloaded(before []int) {
	n.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		w := n.workers()
		if len(w) == 1 && !slices.Contains(before, w[0]) {
			n.client.CloseIdleConnections()
			return
		}
		if time.Now().After(deadline) {
			n.t.Fatalf("nginx reload not effective after 10s: workers %v, before %v\n%s", w, before, n.log())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// waitReloads waits until the master has started at least want reloads.
func (n *testNginx) waitReloads(want int) bool {
	deadline := time.Now().Add(5 * time.Second)
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

// freeAddr returns a 127.0.0.1 address with a port free a moment ago.
func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}
