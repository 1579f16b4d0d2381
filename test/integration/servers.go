package integration

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"
)

// Process is a server a test started; it is stopped by its PID.
type Process struct {
	Name    string
	LogPath string

	cmd     *exec.Cmd
	done    chan struct{}
	waitErr error
}

// StartProcess runs bin with args, its output appended to logPath. At the
// end of owner (the test that owns the server, t itself or a parent of t)
// it is stopped (SIGTERM, then SIGKILL after 15s) and, if owner failed,
// the tail of its log is printed.
func StartProcess(t, owner testing.TB, name, logPath, bin string, args ...string) *Process {
	t.Helper()
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.Dir = filepath.Dir(logPath)
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	p := &Process{Name: name, LogPath: logPath, cmd: cmd, done: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.done)
	}()
	t.Logf("started %s (pid %d): %s %s", name, cmd.Process.Pid, bin, strings.Join(args, " "))
	owner.Cleanup(func() {
		p.Stop(owner)
		if owner.Failed() {
			owner.Logf("--- last lines of %s (%s):\n%s", name, logPath, Tail(logPath, 40))
		}
	})
	return p
}

// Pid is the process id.
func (p *Process) Pid() int { return p.cmd.Process.Pid }

// Exited reports whether the process has ended.
func (p *Process) Exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Stop sends SIGTERM, waits up to 15s, then sends SIGKILL. It is a no-op on
// an ended process.
func (p *Process) Stop(t testing.TB) {
	if p.Exited() {
		return
	}
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(15 * time.Second):
		t.Logf("%s (pid %d) ignored SIGTERM for 15s; sending SIGKILL", p.Name, p.Pid())
		_ = p.cmd.Process.Signal(syscall.SIGKILL)
		<-p.done
	}
}

// Kill sends SIGKILL and waits for the process to end.
func (p *Process) Kill(t testing.TB) {
	t.Helper()
	if err := p.cmd.Process.Signal(syscall.SIGKILL); err != nil && !p.Exited() {
		t.Fatalf("killing %s: %v", p.Name, err)
	}
	<-p.done
}

// Signal sends sig to the process.
func (p *Process) Signal(t testing.TB, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signalling %s: %v", p.Name, err)
	}
}

// Tail returns the last n lines of a file.
func Tail(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return err.Error()
	}
	defer f.Close()
	var lines []string
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		lines = append(lines, sc.Text())
		if len(lines) > n {
			lines = lines[1:]
		}
	}
	return strings.Join(lines, "\n")
}

// NeedBinary returns the path of a program; it skips the test when the
// program is missing, or fails it when $CI is "true".
func NeedBinary(t testing.TB, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s is required in CI: %v", name, err)
		}
		t.Skipf("%s not installed: %v", name, err)
	}
	return p
}

var (
	portsMu sync.Mutex
	ports   = map[string]bool{}
)

// FreeAddr returns 127.0.0.1:PORT for a port that was free a moment ago
// and that no other caller got in this test run.
func FreeAddr(t testing.TB) string {
	t.Helper()
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 100 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		if !ports[addr] {
			ports[addr] = true
			return addr
		}
	}
	t.Fatal("no free port")
	return ""
}

// WaitHTTP polls url until it answers 200, failing early if p ends.
func WaitHTTP(t testing.TB, p *Process, url string, timeout time.Duration) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	var last string
	for time.Now().Before(deadline) {
		if p.Exited() {
			t.Fatalf("%s exited (%v) before %s answered:\n%s", p.Name, p.waitErr, url, Tail(p.LogPath, 30))
		}
		resp, err := http.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
			last = resp.Status
		} else {
			last = err.Error()
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%s: %s did not answer 200 within %s (last: %s)", p.Name, url, timeout, last)
}

// Backend is a query engine that speaks the Prometheus HTTP API and scrapes
// the gateway and Hermes.
type Backend struct {
	Name   string
	Binary string
	// Ready is the path that answers 200 once the engine serves queries.
	Ready string
	args  func(addr, scrapeConfig, dataDir string) []string
}

// Prometheus is Debian's Prometheus 2.
var Prometheus = Backend{
	Name: "prometheus", Binary: "prometheus", Ready: "/-/ready",
	args: func(addr, cfg, data string) []string {
		return []string{
			"--config.file=" + cfg, "--storage.tsdb.path=" + data, "--web.listen-address=" + addr,
			"--storage.tsdb.retention.time=1d", "--log.level=info",
		}
	},
}

// VictoriaMetrics is single-node VictoriaMetrics with its own scraper. Its
// default -search.latencyOffset (30s) would hide the samples Hermes needs.
var VictoriaMetrics = Backend{
	Name: "victoriametrics", Binary: "victoria-metrics", Ready: "/health",
	args: func(addr, cfg, data string) []string {
		return []string{
			"-httpListenAddr=" + addr, "-storageDataPath=" + data, "-promscrape.config=" + cfg,
			"-retentionPeriod=1d", "-search.latencyOffset=1s", "-search.disableCache",
		}
	},
}

// TSDB is a running query engine.
type TSDB struct {
	Backend Backend
	// URL is the base URL of its Prometheus query API.
	URL string

	bin, addr, cfg, data, dir string
	proc                      *Process
	starts                    int
	api                       v1.API
	owner                     testing.TB
}

// StartTSDB starts b on a free port, scraping every second the targets of
// jobs (job name → host:port).
func StartTSDB(t testing.TB, b Backend, dir string, jobs map[string]string) *TSDB {
	t.Helper()
	bin := NeedBinary(t, b.Binary)
	d := &TSDB{Backend: b, bin: bin, addr: FreeAddr(t), dir: dir, owner: t,
		cfg: filepath.Join(dir, b.Name+".yml"), data: filepath.Join(dir, b.Name+"-data")}
	d.URL = "http://" + d.addr
	var sb strings.Builder
	sb.WriteString("global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\nscrape_configs:\n")
	for _, job := range []string{"gateway", "hermes"} {
		if target, ok := jobs[job]; ok {
			fmt.Fprintf(&sb, "  - job_name: %s\n    static_configs:\n      - targets: ['%s']\n", job, target)
		}
	}
	if err := os.WriteFile(d.cfg, []byte(sb.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	client, err := api.NewClient(api.Config{Address: d.URL})
	if err != nil {
		t.Fatal(err)
	}
	d.api = v1.NewAPI(client)
	d.Start(t)
	return d
}

// Start starts the engine (again) on the same address and data directory;
// it runs until the end of the test that started it first.
func (d *TSDB) Start(t testing.TB) {
	t.Helper()
	d.starts++
	log := filepath.Join(d.dir, fmt.Sprintf("%s-%d.log", d.Backend.Name, d.starts))
	d.proc = StartProcess(t, d.owner, d.Backend.Name, log, d.bin, d.Backend.args(d.addr, d.cfg, d.data)...)
	WaitHTTP(t, d.proc, d.URL+d.Backend.Ready, 30*time.Second)
}

// Process is the running engine.
func (d *TSDB) Process() *Process { return d.proc }

// Stop stops the engine gracefully.
func (d *TSDB) Stop(t testing.TB) { d.proc.Stop(t) }

// Query runs an instant query now.
func (d *TSDB) Query(q string) (model.Vector, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	v, _, _, err := d.api.Query(ctx, q, time.Now())
	if err != nil {
		return nil, err
	}
	vec, ok := v.(model.Vector)
	if !ok {
		return nil, fmt.Errorf("%s: not a vector: %s", q, v.Type())
	}
	return vec, nil
}

// QueryValue runs q and returns its single value.
func (d *TSDB) QueryValue(q string) (float64, error) {
	vec, err := d.Query(q)
	if err != nil {
		return 0, err
	}
	if len(vec) != 1 {
		return 0, fmt.Errorf("%s: %d series, want 1", q, len(vec))
	}
	return float64(vec[0].Value), nil
}

var (
	buildOnce sync.Once
	hermesBin string
	buildErr  error
)

// HermesBinary builds ./cmd/hermes once per test run.
func HermesBinary(t testing.TB) string {
	t.Helper()
	buildOnce.Do(func() {
		out, err := exec.Command("go", "env", "GOMOD").Output()
		if err != nil {
			buildErr = fmt.Errorf("go env GOMOD: %w", err)
			return
		}
		root := filepath.Dir(strings.TrimSpace(string(out)))
		if root == "." || root == "" {
			buildErr = errors.New("not inside the module")
			return
		}
		dir, err := os.MkdirTemp("", "hermes-integration-")
		if err != nil {
			buildErr = err
			return
		}
		binDir = dir
		hermesBin = filepath.Join(dir, "hermes")
		cmd := exec.Command("go", "build", "-o", hermesBin, "./cmd/hermes")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/hermes: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return hermesBin
}

// binDir holds the built binary; TestMain removes it.
var binDir string
