package integration

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"
	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/internal/testenv"
)

// startProcess runs bin with args in the directory of logPath, its output
// appended to logPath. At the end of owner (the test that owns the server,
// t itself or a parent of t) it is stopped (SIGTERM, then SIGKILL after
// 15s) and, if owner failed, the tail of its log is printed. Unlike
// testenv.Start, the process outlives t when owner is a parent of t, as a
// server restarted by a subtest must.
func startProcess(t, owner testing.TB, name, logPath, bin string, args ...string) *testenv.Process {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = filepath.Dir(logPath)
	p, err := testenv.Launch(name, cmd, logPath)
	if err != nil {
		t.Fatal(err)
	}
	p.StopTimeout = 15 * time.Second
	t.Logf("started %s (pid %d): %s %s", name, p.Pid(), bin, strings.Join(args, " "))
	owner.Cleanup(func() {
		stop(owner, p)
		if owner.Failed() {
			owner.Logf("--- last lines of %s (%s):\n%s", name, logPath, p.LogTail(40))
		}
	})
	return p
}

// stop stops p (testenv.Process.Stop), logging a SIGKILL.
func stop(t testing.TB, p *testenv.Process) {
	if err := p.Stop(); err != nil {
		t.Log(err)
	}
}

// signal sends sig to p, failing t if it cannot.
func signal(t testing.TB, p *testenv.Process, sig os.Signal) {
	t.Helper()
	if err := signalPid(p, sig); err != nil {
		t.Fatalf("signalling %s: %v", p.Name, err)
	}
}

// signalPid sends sig to p by its PID; testenv.Process has no Signal
// method. On an ended process it returns os.ErrProcessDone.
func signalPid(p *testenv.Process, sig os.Signal) error {
	if p.Exited() {
		return os.ErrProcessDone
	}
	proc, err := os.FindProcess(p.Pid())
	if err != nil {
		return err
	}
	defer proc.Release()
	return proc.Signal(sig)
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
	proc                      *testenv.Process
	starts                    int
	api                       v1.API
	owner                     testing.TB
}

// StartTSDB starts b on a free port, scraping every second the targets of
// jobs (job name → host:port).
func StartTSDB(t testing.TB, b Backend, dir string, jobs map[string]string) *TSDB {
	t.Helper()
	bin := testenv.Binary(t, b.Binary)
	d := &TSDB{Backend: b, bin: bin, addr: testenv.FreeAddr(t), dir: dir, owner: t,
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
	d.proc = startProcess(t, d.owner, d.Backend.Name, log, d.bin, d.Backend.args(d.addr, d.cfg, d.data)...)
	testenv.WaitHTTP(t, d.URL+d.Backend.Ready, 30*time.Second, d.proc)
}

// Process is the running engine.
func (d *TSDB) Process() *testenv.Process { return d.proc }

// Stop stops the engine gracefully.
func (d *TSDB) Stop(t testing.TB) { stop(t, d.proc) }

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
