package unleash

// The tests run against a real Unleash: one PostgreSQL cluster and one
// unleash-server for the whole package, started on first use and stopped
// by TestMain.
//
// Needs: PostgreSQL's server binaries (HERMES_PG_BIN, default the newest
// /usr/lib/postgresql/*/bin), node, and unleash-server installed with npm
// into HERMES_UNLEASH_DIR (default /var/cache/hermes-test/unleash-server,
// see scripts/install-deps.sh). Without them the tests skip, unless
// CI=true, where they fail.

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/internal/testenv"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if srv.stop != nil {
		srv.stop()
	}
	os.Exit(code)
}

// server is the running Unleash.
type server struct {
	URL           string // base URL
	AdminToken    string // *:*.…
	ClientToken   string // backend token for the environment
	FrontendToken string // frontend token for the environment
	Environment   string
}

var srv struct {
	once  sync.Once
	s     *server
	skip  string // why the tests cannot run here
	err   error
	stop  func()
	flags atomic.Int64 // makes flag names unique
}

// unleashServer returns the shared Unleash, starting it on first use. It
// skips t when a dependency is missing (fails it when CI=true).
func unleashServer(t *testing.T) *server {
	t.Helper()
	srv.once.Do(func() {
		// Kept if a testenv helper ends t during the start-up.
		srv.err = errors.New("Unleash did not start (see the first test that needed it)")
		srv.s, srv.stop, srv.skip, srv.err = startServers(t)
	})
	switch {
	case srv.skip != "" && os.Getenv("CI") == "true":
		t.Fatalf("CI=true and %s", srv.skip)
	case srv.skip != "":
		t.Skip(srv.skip)
	case srv.err != nil:
		t.Fatal(srv.err)
	}
	return srv.s
}

// uniqueName returns a flag name no other test uses.
func uniqueName(prefix string) string {
	return fmt.Sprintf("%s-%d-%d", prefix, os.Getpid(), srv.flags.Add(1))
}

// pgBin finds PostgreSQL's server binaries.
func pgBin() string {
	if d := os.Getenv("HERMES_PG_BIN"); d != "" {
		return d
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	slices.SortFunc(dirs, func(a, b string) int { // newest major first
		va, _ := strconv.Atoi(filepath.Base(filepath.Dir(a)))
		vb, _ := strconv.Atoi(filepath.Base(filepath.Dir(b)))
		return vb - va
	})
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d
		}
	}
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p)
	}
	return ""
}

func unleashDir() string {
	if d := os.Getenv("HERMES_UNLEASH_DIR"); d != "" {
		return d
	}
	return "/var/cache/hermes-test/unleash-server"
}

// startServers starts PostgreSQL and Unleash. skip is set when a
// dependency is missing; err when one is there but fails. The servers
// outlive t, the first test that needs them: stop stops them; t only
// reports (and ends on) a failure of the testenv helpers.
func startServers(t *testing.T) (s *server, stop func(), skip string, err error) {
	bin := pgBin()
	if bin == "" {
		return nil, nil, "PostgreSQL server binaries not found (apt-get install postgresql, or set HERMES_PG_BIN)", nil
	}
	node, err := exec.LookPath("node")
	if err != nil {
		return nil, nil, "node not found (apt-get install nodejs)", nil
	}
	serverJS := filepath.Join(unleashDir(), "node_modules", "unleash-server", "dist", "server.js")
	if _, err := os.Stat(serverJS); err != nil {
		return nil, nil, fmt.Sprintf("unleash-server not installed in %s (run scripts/install-deps.sh)", unleashDir()), nil
	}

	dir, err := os.MkdirTemp("", "hermes-unleash-")
	if err != nil {
		return nil, nil, "", err
	}
	var cleanups []func()
	stopAll := func() {
		for _, f := range slices.Backward(cleanups) {
			f()
		}
		os.RemoveAll(dir)
	}
	started := false
	defer func() {
		if !started { // an error, or t ended
			stopAll()
		}
	}()

	// PostgreSQL refuses to run as root: run initdb and pg_ctl as postgres.
	asPG := func(name string, args ...string) *exec.Cmd { return exec.Command(name, args...) }
	if os.Geteuid() == 0 {
		u, err := user.Lookup("postgres")
		if err != nil {
			return nil, nil, "", fmt.Errorf("running as root and no postgres user to run PostgreSQL as: %w", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		if err := os.Chown(dir, uid, gid); err != nil {
			return nil, nil, "", err
		}
		asPG = func(name string, args ...string) *exec.Cmd {
			return exec.Command("runuser", append([]string{"-u", "postgres", "--", name}, args...)...)
		}
	}
	data := filepath.Join(dir, "pgdata")
	if out, err := asPG(filepath.Join(bin, "initdb"), "-D", data, "-U", "postgres", "-A", "trust",
		"-E", "UTF8", "--locale=C", "--no-sync").CombinedOutput(); err != nil {
		return nil, nil, "", fmt.Errorf("initdb: %v\n%s", err, out)
	}
	pgPort := testenv.FreePort(t)
	pgLog := filepath.Join(dir, "postgres.log")
	pgOpts := fmt.Sprintf("-c listen_addresses=127.0.0.1 -p %d -k %s -c fsync=off -c synchronous_commit=off -c full_page_writes=off", pgPort, dir)
	if out, err := asPG(filepath.Join(bin, "pg_ctl"), "-D", data, "-l", pgLog, "-w", "-t", "60", "-o", pgOpts, "start").CombinedOutput(); err != nil {
		log, _ := os.ReadFile(pgLog)
		return nil, nil, "", fmt.Errorf("pg_ctl start: %v\n%s\n%s", err, out, log)
	}
	cleanups = append(cleanups, func() {
		if out, err := asPG(filepath.Join(bin, "pg_ctl"), "-D", data, "-m", "fast", "-w", "-t", "30", "stop").CombinedOutput(); err != nil {
			fmt.Fprintf(os.Stderr, "pg_ctl stop: %v\n%s", err, out)
		}
	})
	if out, err := exec.Command(filepath.Join(bin, "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1",
		"-h", "127.0.0.1", "-p", strconv.Itoa(pgPort), "-U", "postgres", "-d", "postgres",
		"-c", "CREATE ROLE unleash LOGIN PASSWORD 'unleash'",
		"-c", "CREATE DATABASE unleash OWNER unleash").CombinedOutput(); err != nil {
		return nil, nil, "", fmt.Errorf("psql: %v\n%s", err, out)
	}

	port := testenv.FreePort(t)
	s = &server{
		URL:           fmt.Sprintf("http://127.0.0.1:%d", port),
		AdminToken:    "*:*." + randomHex(),
		ClientToken:   "*:development." + randomHex(),
		FrontendToken: "*:development." + randomHex(),
		Environment:   "development",
	}
	cmd := exec.Command(node, serverJS)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(),
		"TZ=UTC",
		fmt.Sprintf("DATABASE_URL=postgres://unleash:unleash@127.0.0.1:%d/unleash", pgPort),
		"DATABASE_SSL=false",
		"HTTP_PORT="+strconv.Itoa(port),
		"HTTP_HOST=127.0.0.1",
		"INIT_ADMIN_API_TOKENS="+s.AdminToken,
		"INIT_BACKEND_API_TOKENS="+s.ClientToken,
		"INIT_FRONTEND_API_TOKENS="+s.FrontendToken,
		"CHECK_VERSION=false",
		"SEND_TELEMETRY=false",
		"LOG_LEVEL=warn",
	)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	p, err := testenv.Launch("unleash-server", cmd, filepath.Join(dir, "unleash.log"))
	if err != nil {
		return nil, nil, "", err
	}
	cleanups = append(cleanups, func() {
		if err := p.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	})
	testenv.WaitHTTP(t, s.URL+"/health", 90*time.Second, p)
	started = true
	return s, stopAll, "", nil
}

func randomHex() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// recordingProxy sits between an actuator and Unleash: it counts the
// requests that change something and can play a broken Unleash.
type recordingProxy struct {
	URL    string
	writes atomic.Int64
	broken atomic.Bool
	// lose forwards each write to Unleash and then holds its reply until
	// the client gives up: an outcome the actuator cannot know.
	lose atomic.Bool
	mu   sync.Mutex
	log  []string // "METHOD path" of the writes
}

func newRecordingProxy(t *testing.T, target string) *recordingProxy {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	p := &recordingProxy{}
	rp := httputil.NewSingleHostReverseProxy(u)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if p.broken.Load() {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusServiceUnavailable)
			io.WriteString(w, `{"message":"Unleash is down for maintenance"}`)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			p.writes.Add(1)
			p.mu.Lock()
			p.log = append(p.log, r.Method+" "+r.URL.Path)
			p.mu.Unlock()
			if p.lose.Load() {
				rp.ServeHTTP(httptest.NewRecorder(), r.WithContext(context.WithoutCancel(r.Context())))
				<-r.Context().Done()
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	p.URL = hs.URL
	return p
}

// takeWrites returns the writes since the last call.
func (p *recordingProxy) takeWrites() []string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := p.log
	p.log = nil
	p.writes.Store(0)
	return out
}

// api calls Unleash directly with a token; out may be nil.
func (s *server) api(t *testing.T, token, method, path string, body string, out any) int {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, s.URL+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", token)
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode >= 300 {
		return resp.StatusCode
	}
	if out != nil {
		if err := json.Unmarshal(data, out); err != nil {
			t.Fatalf("%s %s: %v\n%s", method, path, err, data)
		}
	}
	return resp.StatusCode
}

// eventually retries check until it returns nil or timeout passes: the
// client and frontend APIs see a change once Unleash's revision moves
// (it polls for that every second).
func eventually(t *testing.T, timeout time.Duration, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("after %v: %v", timeout, err)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
