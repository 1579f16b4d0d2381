package lab_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/api"
	v1 "github.com/prometheus/client_golang/api/prometheus/v1"

	"github.com/hermes-failover/hermes/internal/testenv"
	"github.com/hermes-failover/hermes/rules/config"
)

func TestMain(m *testing.M) { testenv.Main(m) }

// urls is what the lab writes to DIR/lab.json once it is up.
type urls struct {
	Hermes, Prometheus, Alertmanager, Gateway, Provider, Pager string
}

// route is one route of GET /api/v1/status, as far as the tests read it.
type route struct {
	Name          string   `json:"name"`
	Score         float64  `json:"score"`
	Level         string   `json:"level"`
	FailbackStage int      `json:"failback_stage"`
	Traffic       int      `json:"traffic_percent"`
	Reasons       []string `json:"reasons"`
	State         []string `json:"state"`
	Moved         string   `json:"moved"`
}

func (r route) String() string {
	return fmt.Sprintf("%s %s score %.1f stage %d traffic %d%% state %q reasons %q", r.Name, r.Level, r.Score, r.FailbackStage, r.Traffic, r.State, r.Reasons)
}

// labRun is one `hermes lab` the test started, and the clients it reads
// the lab with.
type labRun struct {
	t      *testing.T
	hermes string // the hermes binary
	dir    string // the lab's --dir
	proc   *testenv.Process
	u      urls
	client *http.Client
	prom   *testenv.TSDB
	am     *testenv.Alertmanager
}

// startLab starts `hermes lab` with args (on free ports, in a temporary
// --dir), stopped at the end of t as a user stops it (Ctrl-C), and waits
// until it is up. Outside CI a missing server skips t; with CI=true it
// fails it (testenv.Binary). When t fails, the last lines of Hermes's logs
// are logged.
func startLab(t *testing.T, args ...string) *labRun {
	t.Helper()
	for _, bin := range []string{"prometheus", "prometheus-alertmanager", "nginx"} {
		testenv.Binary(t, bin)
	}
	l := &labRun{t: t, hermes: testenv.HermesBinary(t), dir: t.TempDir(), client: &http.Client{Timeout: 10 * time.Second}}
	l.proc = testenv.Start(t, "hermes-lab", exec.Command(l.hermes, append(append([]string{"lab"}, args...), "--port-base", "0", "--dir", l.dir)...))
	l.proc.StopSignal, l.proc.StopTimeout = os.Interrupt, 60*time.Second
	t.Cleanup(func() {
		if t.Failed() {
			for _, log := range []string{"hermes-run.log", "hermes-proxy.log", "hermes-probe.log"} {
				t.Logf("--- last lines of %s:\n%s", log, testenv.Tail(filepath.Join(l.dir, log), 30))
			}
		}
	})
	testenv.WaitUntil(t, 3*time.Minute, l.proc, func() error {
		b, err := os.ReadFile(filepath.Join(l.dir, "lab.json"))
		if err != nil {
			return err
		}
		return json.Unmarshal(b, &l.u)
	})
	promClient, err := api.NewClient(api.Config{Address: l.u.Prometheus})
	if err != nil {
		t.Fatal(err)
	}
	l.prom = &testenv.TSDB{URL: l.u.Prometheus, API: v1.NewAPI(promClient)}
	l.am = &testenv.Alertmanager{URL: l.u.Alertmanager}
	return l
}

// get is the body of a GET of url, which must answer 200.
func (l *labRun) get(url string) []byte {
	l.t.Helper()
	if l.proc.Exited() {
		l.t.Fatalf("hermes lab exited (%v):\n%s", l.proc.Err(), l.proc.LogTail(40))
	}
	resp, err := l.client.Get(url)
	if err != nil {
		l.t.Fatalf("GET %s: %v", url, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		l.t.Fatalf("GET %s: %s %v\n%s", url, resp.Status, err, b)
	}
	return b
}

// status is route name as GET /api/v1/status shows it now.
func (l *labRun) status(name string) route {
	l.t.Helper()
	var st struct {
		Services []struct {
			Routes []route `json:"routes"`
		} `json:"services"`
	}
	if err := json.Unmarshal(l.get(l.u.Hermes+"/api/v1/status"), &st); err != nil {
		l.t.Fatal(err)
	}
	for _, s := range st.Services {
		for _, r := range s.Routes {
			if r.Name == name {
				return r
			}
		}
	}
	l.t.Fatalf("no route %s in the status", name)
	return route{}
}

// calls is the rate of route name's calls that hermes proxy recorded
// behind nginx, as Prometheus holds it, and a line saying so with free's
// status.
func (l *labRun) calls(name string) (float64, string) {
	v, err := l.prom.QueryValue(fmt.Sprintf(`sum(rate(llm_gateway_requests_total{route=%q}[10s])) or vector(0)`, name))
	return v, fmt.Sprintf("%s: %v calls/s (%v); %s", name, v, err, l.status("free"))
}

// labCmd runs `hermes lab ARGS --provider URL` against the lab's fake
// provider (fault, heal).
func (l *labRun) labCmd(args ...string) {
	l.t.Helper()
	out, err := exec.Command(l.hermes, append([]string{"lab"}, append(args, "--provider", l.u.Provider)...)...).CombinedOutput()
	if err != nil {
		l.t.Fatalf("hermes lab %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	l.t.Logf("hermes lab %s: %s", strings.Join(args, " "), strings.TrimSpace(string(out)))
}

// policy is the policy the lab's `hermes run` runs (DIR/hermes.yaml), as
// Hermes loads it.
func (l *labRun) policy() *config.Config {
	l.t.Helper()
	cfg, err := config.Load(filepath.Join(l.dir, "hermes.yaml"))
	if err != nil {
		l.t.Fatalf("the lab's policy: %v", err)
	}
	return cfg
}
