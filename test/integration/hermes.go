package integration

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/hermes-failover/hermes/internal/testenv"
)

// Hermes is a `hermes run` process. Restarts keep its flags and address.
type Hermes struct {
	URL        string
	Addr       string
	ConfigPath string
	AuditPath  string
	SplitPath  string

	srv *testenv.Server
}

// NewHermes prepares a Hermes on a free port whose files live in dir; it
// does not start it.
func NewHermes(t testing.TB, dir string) *Hermes {
	t.Helper()
	addr := testenv.FreeAddr(t)
	h := &Hermes{
		URL: "http://" + addr, Addr: addr,
		ConfigPath: filepath.Join(dir, "hermes.yaml"),
		AuditPath:  filepath.Join(dir, "audit.jsonl"),
		SplitPath:  filepath.Join(dir, "split.json"),
	}
	h.srv = testenv.NewServer(t, "hermes", dir, h.URL+"/-/healthy", testenv.HermesBinary(t), "run",
		"--config", h.ConfigPath, "--web.listen-address", h.Addr,
		"--audit.file", h.AuditPath, "--restore.selector", `job="hermes"`,
		// The tests reload over HTTP, by SIGHUP and by editing the file.
		"--web.enable-lifecycle", "--config.watch")
	h.srv.StopTimeout = 15 * time.Second
	return h
}

// EnableAdminAPI adds --web.enable-admin-api to h's flags, for a test
// that sends operator commands; call it before Start. The admin API is
// closed by default.
func (h *Hermes) EnableAdminAPI() { h.srv.Args = append(h.srv.Args, "--web.enable-admin-api") }

// SetReplica adds --replica name to h's flags, for a test of two
// replicas writing one backend; call it before Start.
func (h *Hermes) SetReplica(name string) { h.srv.Args = append(h.srv.Args, "--replica", name) }

// SetCandidate adds --candidate.file path to h's flags: a shadow policy
// evaluated beside the configuration; call it before Start.
func (h *Hermes) SetCandidate(path string) {
	h.srv.Args = append(h.srv.Args, "--candidate.file", path)
}

// Stop stops the process by its PID and waits until it exited.
func (h *Hermes) Stop(t testing.TB) {
	t.Helper()
	h.srv.Stop(t)
}

// Start runs `hermes run` and waits until it serves and ran a first tick
// (state restored, `ticked` in the status). It does not wait for /-/ready:
// some tests keep Prometheus down on purpose, and Hermes is only ready once
// a tick had data. The process runs until the end of the test that made h.
func (h *Hermes) Start(t testing.TB) {
	t.Helper()
	h.srv.Start(t)
	c := http.Client{Timeout: 5 * time.Second}
	testenv.WaitUntil(t, 60*time.Second, h.Process(), func() error {
		resp, err := c.Get(h.URL + "/api/v1/status")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var st Status
		if err := json.NewDecoder(resp.Body).Decode(&st); err != nil {
			return fmt.Errorf("status: %s %w", resp.Status, err)
		}
		if !st.Ticked {
			return errors.New("no tick yet")
		}
		return nil
	})
}

// ReadyCode is the HTTP status of GET /-/ready and its body.
func (h *Hermes) ReadyCode(t testing.TB) (int, string) {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(h.URL + "/-/ready")
	if err != nil {
		t.Fatalf("GET /-/ready: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// Process is the running process.
func (h *Hermes) Process() *testenv.Process { return h.srv.Process() }

// LogPath is the log of the current process.
func (h *Hermes) LogPath() string { return h.srv.LogPath() }

// Status is what GET /api/v1/status answers, as far as the tests read it.
type Status struct {
	Ready    bool      `json:"ready"`
	Ticked   bool      `json:"ticked"`
	LastTick time.Time `json:"last_tick"`
	Interval string    `json:"evaluation_interval"`
	LoadedAt time.Time `json:"config_loaded_at"`
	Services []struct {
		Name    string         `json:"name"`
		Weights map[string]int `json:"weights"`
		Routes  []RouteStatus  `json:"routes"`
	} `json:"services"`
}

// RouteStatus is one route in Status.
type RouteStatus struct {
	Name          string         `json:"name"`
	Score         float64        `json:"score"`
	Level         string         `json:"level"`
	Since         time.Time      `json:"since"`
	FailbackStage int            `json:"failback_stage"`
	Traffic       int            `json:"traffic_percent"`
	Contributions []Contribution `json:"contributions"`
	Missing       []string       `json:"missing"`
}

// Contribution is one signal of a route in Status.
type Contribution struct {
	Signal string `json:"signal"`
	Status string `json:"status"`
	Reason string `json:"reason"`
	Idle   bool   `json:"idle"`
}

// Route returns the route's status (zero if absent).
func (s Status) Route(name string) RouteStatus {
	for _, svc := range s.Services {
		for _, r := range svc.Routes {
			if r.Name == name {
				return r
			}
		}
	}
	return RouteStatus{}
}

// Weights returns the split of the test service.
func (s Status) Weights() map[string]int {
	for _, svc := range s.Services {
		if svc.Name == Service {
			return svc.Weights
		}
	}
	return nil
}

// Signal returns the contribution of one signal.
func (r RouteStatus) Signal(name string) Contribution {
	for _, c := range r.Contributions {
		if c.Signal == name {
			return c
		}
	}
	return Contribution{}
}

// AllOK reports whether every signal of the route answered.
func (r RouteStatus) AllOK() bool {
	if len(r.Contributions) == 0 {
		return false
	}
	for _, c := range r.Contributions {
		if c.Status != "ok" {
			return false
		}
	}
	return true
}

// Answering reports whether every signal of the route answered, apart
// from signals that need traffic on a route that gets none.
func (r RouteStatus) Answering() bool {
	if len(r.Contributions) == 0 {
		return false
	}
	for _, c := range r.Contributions {
		if c.Status != "ok" && !(c.Idle && c.Status == "missing") {
			return false
		}
	}
	return true
}

func (r RouteStatus) String() string {
	var sigs []string
	for _, c := range r.Contributions {
		s := c.Signal + "=" + c.Status
		if c.Reason != "" {
			s += "(" + c.Reason + ")"
		}
		if c.Idle {
			s += "(idle)"
		}
		sigs = append(sigs, s)
	}
	return fmt.Sprintf("%s: %s score %.1f since %s stage %d traffic %d%% [%s]", r.Name, r.Level, r.Score,
		r.Since.UTC().Format(time.RFC3339), r.FailbackStage, r.Traffic, strings.Join(sigs, " "))
}

// Status fetches /api/v1/status; it fails the test if Hermes died.
func (h *Hermes) Status(t testing.TB) Status {
	t.Helper()
	h.checkAlive(t)
	var st Status
	b := h.get(t, "/api/v1/status")
	if err := json.Unmarshal(b, &st); err != nil {
		t.Fatalf("status: %v\n%s", err, b)
	}
	return st
}

func (h *Hermes) checkAlive(t testing.TB) {
	t.Helper()
	if p := h.Process(); p.Exited() {
		t.Fatalf("hermes exited (%v):\n%s", p.Err(), p.LogTail(40))
	}
}

func (h *Hermes) get(t testing.TB, path string) []byte {
	t.Helper()
	c := http.Client{Timeout: 5 * time.Second}
	resp, err := c.Get(h.URL + path)
	if err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s %v\n%s", path, resp.Status, err, b)
	}
	return b
}

// Metric sums the samples of a counter or gauge on Hermes's /metrics whose
// labels include labels.
func (h *Hermes) Metric(t testing.TB, name string, labels map[string]string) float64 {
	t.Helper()
	h.checkAlive(t)
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(bytes.NewReader(h.get(t, "/metrics")))
	if err != nil {
		t.Fatalf("parsing /metrics: %v", err)
	}
	fam, ok := fams[name]
	if !ok {
		return 0
	}
	sum := 0.0
	for _, m := range fam.GetMetric() {
		if !hasLabels(m, labels) {
			continue
		}
		switch {
		case m.Counter != nil:
			sum += m.Counter.GetValue()
		case m.Gauge != nil:
			sum += m.Gauge.GetValue()
		}
	}
	return sum
}

func hasLabels(m *dto.Metric, want map[string]string) bool {
	for k, v := range want {
		found := false
		for _, lp := range m.GetLabel() {
			if lp.GetName() == k && lp.GetValue() == v {
				found = true
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// Reload POSTs /-/reload and returns the HTTP status and body.
func (h *Hermes) Reload(t testing.TB) (int, string) {
	t.Helper()
	c := http.Client{Timeout: 70 * time.Second}
	resp, err := c.Post(h.URL+"/-/reload", "text/plain", nil)
	if err != nil {
		t.Fatalf("POST /-/reload: %v", err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// AuditRecord is one line of the audit log: a core event (level, failback,
// traffic, alert, override) or a shell record (restore, reload, actuation).
type AuditRecord struct {
	Time     time.Time      `json:"time"`
	Type     string         `json:"type"`
	Service  string         `json:"service"`
	Route    string         `json:"route"`
	From     string         `json:"from"`
	To       string         `json:"to"`
	Stage    *int           `json:"stage"`
	Percent  *int           `json:"percent"`
	Weights  map[string]int `json:"weights"`
	Actuator string         `json:"actuator"`
	Result   string         `json:"result"`
	Reason   string         `json:"reason"`
	Error    string         `json:"error"`
}

// Audit reads the whole audit log.
func (h *Hermes) Audit(t testing.TB) []AuditRecord {
	t.Helper()
	f, err := os.Open(h.AuditPath)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []AuditRecord
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for n := 1; sc.Scan(); n++ {
		var r AuditRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("%s:%d: %v: %s", h.AuditPath, n, err, sc.Text())
		}
		out = append(out, r)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// WriteConfig replaces the configuration file atomically.
func (h *Hermes) WriteConfig(t testing.TB, text string) {
	t.Helper()
	tmp := h.ConfigPath + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, h.ConfigPath); err != nil {
		t.Fatal(err)
	}
}
