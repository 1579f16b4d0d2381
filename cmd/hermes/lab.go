package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/hermes-failover/hermes/fakeprovider"
)

var labUsage = usage{name: "lab", synopsis: "[--fast] [--rate N] [--port-base N] [--dir DIR] | fault ROUTE PERCENT KIND | heal ROUTE",
	summary: "run a live lab on 127.0.0.1: Prometheus, Alertmanager, nginx, a fake provider with a fault knob, hermes proxy, probe and run (docs/lab.md)",
	details: `"hermes lab" starts the lab and runs until Ctrl-C, then stops every server by
its PID. In another terminal:

  hermes lab fault ROUTE PERCENT KIND   e.g. hermes lab fault free 30% error_body
  hermes lab heal ROUTE                 the route answers healthily again

Ports (--port-base B, default 19790): B hermes run, B+1 hermes probe,
B+2 hermes proxy, B+3 fake provider, B+4 Prometheus, B+5 Alertmanager,
B+6 nginx (the gateway), B+7 nginx's state for Hermes, B+8 the pager,
B+9..B+11 nginx's route listeners (free, paid-standard, paid-premium).
--port-base 0 picks free ports and prints them.

Fault kinds: ` + strings.Join(kindNames(), ", ") + `
(error_body is error_in_200: an error template inside HTTP 200).
`}

var labFaultUsage = usage{name: "lab fault", synopsis: "ROUTE PERCENT KIND [--provider URL]",
	summary: "make PERCENT of ROUTE's requests to the lab's fake provider fail as KIND (e.g. free 30% error_body)"}

var labHealUsage = usage{name: "lab heal", synopsis: "ROUTE [--provider URL]",
	summary: "make ROUTE's requests to the lab's fake provider healthy again"}

// labDefaultPortBase is the first of the lab's ports: off Prometheus's
// (9090), Alertmanager's (9093) and Hermes's own defaults (9797-9799), so
// that the lab runs beside a real installation.
const labDefaultPortBase = 19790

func kindNames() []string {
	out := make([]string, len(fakeprovider.Kinds))
	for i, k := range fakeprovider.Kinds {
		out[i] = string(k)
	}
	return out
}

// labCmd implements "hermes lab": the lab, or its fault and heal actions.
func labCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "fault":
			return labFaultCmd(ctx, args[1:], stdout, stderr)
		case "heal":
			return labHealCmd(ctx, args[1:], stdout, stderr)
		}
	}
	fs := labUsage.newFlags()
	fast := fs.Bool("fast", false, "time-compressed: the shipped policy's level and failback timers divided by 30, a 3s tick (the CI tour; not a policy for production)")
	rate := fs.Float64("rate", 12, "requests a second the load generator sends through nginx (a failback's first stage gets 10 % of it; docs/lab.md says what it needs)")
	base := fs.Int("port-base", labDefaultPortBase, "first of the lab's 12 loopback ports; 0 picks free ones")
	dir := fs.String("dir", "", "directory of the servers' configurations, data and logs (default: a new temporary one, removed at the end)")
	if _, code, ok := labUsage.parse(fs, args, 0, 0, stdout, stderr); !ok {
		return code
	}
	if !(*rate > 0 && *rate <= 1000) {
		return labUsage.fail(stderr, fs, "--rate %v: want a number in (0, 1000]", *rate)
	}
	if *base < 0 || *base > 65535-len(labPortNames) {
		return labUsage.fail(stderr, fs, "--port-base %d: out of range", *base)
	}
	logger := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))
	l := &lab{fast: *fast, rate: *rate, logger: logger, stdout: stdout}
	if err := l.run(ctx, *base, *dir); err != nil {
		fmt.Fprintf(stderr, "hermes lab: %v\n", err)
		return 1
	}
	return 0
}

// labProviderFlag is the --provider flag of lab fault and lab heal: the
// fake provider's address at the default ports.
func labProviderFlag(fs *flag.FlagSet) *string {
	return fs.String("provider", fmt.Sprintf("http://127.0.0.1:%d", labDefaultPortBase+3), "the lab's fake provider")
}

func labFaultCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := labFaultUsage.newFlags()
	provider := labProviderFlag(fs)
	pos, code, ok := labFaultUsage.parse(fs, args, 3, 3, stdout, stderr)
	if !ok {
		return code
	}
	pct, err := fakeprovider.ParsePercent(pos[1])
	if err != nil {
		return labFaultUsage.fail(stderr, fs, "%v", err)
	}
	kind, err := fakeprovider.ParseKind(pos[2])
	if err != nil {
		return labFaultUsage.fail(stderr, fs, "%v", err)
	}
	if kind == fakeprovider.Healthy {
		return labFaultUsage.fail(stderr, fs, "healthy is no fault: hermes lab heal %s", pos[0])
	}
	f := fakeprovider.Fault{Kind: kind, Percent: pct}
	if err := fakeprovider.NewClient(*provider).SetFault(ctx, pos[0], f); err != nil {
		fmt.Fprintf(stderr, "hermes lab fault: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "route %s: %s of its requests fail as %s\n", pos[0], strconv.FormatFloat(pct, 'f', -1, 64)+"%", kind)
	return 0
}

func labHealCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := labHealUsage.newFlags()
	provider := labProviderFlag(fs)
	pos, code, ok := labHealUsage.parse(fs, args, 1, 1, stdout, stderr)
	if !ok {
		return code
	}
	if err := fakeprovider.NewClient(*provider).Heal(ctx, pos[0]); err != nil {
		fmt.Fprintf(stderr, "hermes lab heal: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "route %s: healthy\n", pos[0])
	return 0
}

// lab is one run of the lab.
type lab struct {
	fast   bool
	rate   float64
	logger *slog.Logger
	stdout io.Writer

	dir   string
	ports labPorts
	bins  struct{ prometheus, alertmanager, nginx, hermes string }
}

func (l *lab) addr(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }
func (l *lab) url(port int) string  { return "http://" + l.addr(port) }

// LabURLs is what the lab writes to DIR/lab.json once it is up, for
// scripts and the tour's test.
type LabURLs struct {
	Hermes       string `json:"hermes"`
	Prometheus   string `json:"prometheus"`
	Alertmanager string `json:"alertmanager"`
	Gateway      string `json:"gateway"`
	Provider     string `json:"provider"`
	Proxy        string `json:"proxy"`
	Probe        string `json:"probe"`
	Pager        string `json:"pager"`
}

// assignPorts gives the lab base, base+1, … or, with base 0, free ports.
func (l *lab) assignPorts(base int) error {
	ports := make([]int, len(labPortNames))
	for i := range ports {
		if base > 0 {
			ports[i] = base + i
			continue
		}
		// Held open until all are picked, so that no two are the same.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return err
		}
		defer ln.Close()
		ports[i] = ln.Addr().(*net.TCPAddr).Port
	}
	p := &l.ports
	p.Hermes, p.Probe, p.Proxy, p.Provider, p.Prometheus, p.Alertmanager, p.Gateway, p.NginxState, p.Pager =
		ports[0], ports[1], ports[2], ports[3], ports[4], ports[5], ports[6], ports[7], ports[8]
	p.Routes = ports[9:]
	return nil
}

// run starts the lab, prints its URLs, and stops it when ctx ends.
func (l *lab) run(ctx context.Context, base int, dir string) (err error) {
	if l.bins.prometheus, err = findBinary("prometheus"); err != nil {
		return err
	}
	if l.bins.alertmanager, err = findBinary("prometheus-alertmanager", "alertmanager"); err != nil {
		return err
	}
	if l.bins.nginx, err = findBinary("nginx"); err != nil {
		return err
	}
	if l.bins.hermes, err = os.Executable(); err != nil {
		return fmt.Errorf("finding this hermes binary: %w", err)
	}
	if dir == "" {
		if dir, err = os.MkdirTemp("", "hermes-lab-"); err != nil {
			return err
		}
		defer os.RemoveAll(dir)
	}
	if l.dir, err = filepath.Abs(dir); err != nil {
		return err
	}
	if err := l.assignPorts(base); err != nil {
		return err
	}
	// The in-process servers: the fake provider and the pager.
	provider := fakeprovider.New()
	defer provider.Close()
	pager := &labPager{logger: l.logger}
	for _, s := range []struct {
		name string
		port int
		h    http.Handler
	}{{"fake provider", l.ports.Provider, provider.Handler()}, {"pager", l.ports.Pager, pager}} {
		ln, err := net.Listen("tcp", l.addr(s.port))
		if err != nil {
			return fmt.Errorf("%s: %w (is another lab running? --port-base moves every port)", s.name, err)
		}
		srv := &http.Server{Handler: s.h, ReadHeaderTimeout: 5 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		defer srv.Close()
	}

	if err := l.writeFiles(); err != nil {
		return err
	}
	// nginx needs the upstream Hermes writes before it starts: hermes check
	// writes the initial one (every route on free), as docs/actuators.md says.
	var out strings.Builder
	if code := checkCmd([]string{"--config", l.path("hermes.yaml"), "--write-initial"}, &out, &out); code != 0 {
		return fmt.Errorf("hermes check --config %s --write-initial:\n%s", l.path("hermes.yaml"), out.String())
	}

	var children []*labChild
	defer func() {
		for i := len(children) - 1; i >= 0; i-- {
			if err := children[i].stop(15 * time.Second); err != nil {
				l.logger.Warn("stopping", "server", children[i].name, "err", err)
			}
		}
		l.logger.Info("lab stopped", "dir", l.dir)
	}()
	start := func(name string, sig syscall.Signal, ready func() error, bin string, args ...string) error {
		c, err := startChild(name, l.path(strings.ReplaceAll(name, " ", "-")+".log"), sig, bin, args...)
		if err != nil {
			return err
		}
		children = append(children, c)
		l.logger.Info("started", "server", name, "pid", c.cmd.Process.Pid, "log", c.log)
		return c.waitReady(ctx, time.Minute, ready)
	}
	steps := []struct {
		name  string
		sig   syscall.Signal
		ready func() error
		bin   string
		args  []string
	}{
		{"prometheus", syscall.SIGTERM, httpOK(l.url(l.ports.Prometheus) + "/-/ready"), l.bins.prometheus, []string{
			"--config.file=" + l.path("prometheus.yml"), "--storage.tsdb.path=" + l.path("prometheus-data"),
			"--web.listen-address=" + l.addr(l.ports.Prometheus), "--storage.tsdb.retention.time=1d"}},
		{"alertmanager", syscall.SIGTERM, httpOK(l.url(l.ports.Alertmanager) + "/-/ready"), l.bins.alertmanager, []string{
			"--config.file=" + l.path("alertmanager.yml"), "--storage.path=" + l.path("alertmanager-data"),
			"--web.listen-address=" + l.addr(l.ports.Alertmanager), "--cluster.listen-address="}},
		{"nginx", syscall.SIGQUIT, listening(l.addr(l.ports.Gateway)), l.bins.nginx, []string{
			"-p", l.path("nginx"), "-c", l.path("nginx", "nginx.conf"), "-e", l.path("nginx", "error.log")}},
		{"hermes proxy", syscall.SIGTERM, httpOK(l.url(l.ports.Proxy) + "/-/ready"), l.bins.hermes, []string{
			"proxy", "--config", l.path("proxy.yaml"), "--web.listen-address", l.addr(l.ports.Proxy)}},
		{"hermes probe", syscall.SIGTERM, httpOK(l.url(l.ports.Probe) + "/-/healthy"), l.bins.hermes, []string{
			"probe", "--config", l.path("probe.yaml"), "--web.listen-address", l.addr(l.ports.Probe)}},
		{"hermes run", syscall.SIGTERM, httpOK(l.url(l.ports.Hermes) + "/-/healthy"), l.bins.hermes, []string{
			"run", "--config", l.path("hermes.yaml"), "--web.listen-address", l.addr(l.ports.Hermes),
			"--audit.file", l.path("audit.jsonl"), "--overrides.file", l.path("hermes-state.json"),
			"--restore.selector", `job="hermes"`, "--web.enable-admin-api", "--web.enable-lifecycle"}},
	}
	for _, s := range steps {
		if err := start(s.name, s.sig, s.ready, s.bin, s.args...); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
	}

	urls := LabURLs{
		Hermes: l.url(l.ports.Hermes), Prometheus: l.url(l.ports.Prometheus), Alertmanager: l.url(l.ports.Alertmanager),
		Gateway: l.url(l.ports.Gateway), Provider: l.url(l.ports.Provider), Proxy: l.url(l.ports.Proxy),
		Probe: l.url(l.ports.Probe), Pager: l.url(l.ports.Pager),
	}
	b, _ := json.MarshalIndent(urls, "", "  ")
	if err := os.WriteFile(l.path("lab.json"), append(b, '\n'), 0o644); err != nil {
		return err
	}
	loadCtx, stopLoad := context.WithCancel(ctx)
	loadDone := make(chan struct{})
	go func() {
		defer close(loadDone)
		labLoad(loadCtx, urls.Gateway, l.rate, l.logger)
	}()
	defer func() { stopLoad(); <-loadDone }()
	l.printBanner(urls)

	// Until Ctrl-C, or until a server dies.
	died := make(chan *labChild, len(children))
	for _, c := range children {
		go func() {
			select {
			case <-c.done:
				died <- c
			case <-ctx.Done():
			}
		}()
	}
	select {
	case <-ctx.Done():
		l.logger.Info("stopping the lab")
		return nil
	case c := <-died:
		return fmt.Errorf("%s exited (%v); the end of %s:\n%s", c.name, c.err, c.log, c.tail(20))
	}
}

func (l *lab) path(elem ...string) string { return filepath.Join(append([]string{l.dir}, elem...)...) }

// writeFiles writes every server's configuration under the lab's dir.
func (l *lab) writeFiles() error {
	for _, d := range []string{"nginx/tmp", "nginx/hermes", "prometheus-data", "alertmanager-data"} {
		if err := os.MkdirAll(l.path(d), 0o755); err != nil {
			return err
		}
	}
	policy, err := labPolicy(l, l.fast)
	if err != nil {
		return err
	}
	scrape, e2e := labScrape, 15*time.Second
	if l.fast {
		scrape, e2e = labFastInterval, labFastInterval
	}
	files := map[string]string{
		"hermes.yaml":      string(policy),
		"prometheus.yml":   l.prometheusConf(scrape),
		"alertmanager.yml": l.alertmanagerConf(),
		"nginx/nginx.conf": l.nginxConf(),
		"proxy.yaml":       l.proxyConf(),
		"probe.yaml":       l.probeConf(e2e),
	}
	var errs []error
	for name, text := range files {
		if err := os.WriteFile(l.path(name), []byte(text), 0o644); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// printBanner tells the user where everything is and what to do next.
func (l *lab) printBanner(u LabURLs) {
	policy := "the shipped policy (rules/hermes.yaml)"
	if l.fast {
		policy = fmt.Sprintf("the shipped policy, time-compressed (--fast: timers ÷ %d, tick %s)", labFast, labFastInterval)
	}
	provider := ""
	if u.Provider != fmt.Sprintf("http://127.0.0.1:%d", labDefaultPortBase+3) {
		provider = " --provider " + u.Provider
	}
	fmt.Fprintf(l.stdout, `
The Hermes lab is up: %s, %s req/s through nginx.
  Hermes (the page)   %s/
  Prometheus          %s/
  Alertmanager (API)  %s/api/v2/alerts
  the pager           %s/   (what Alertmanager notified; also logged here)
  nginx (the gateway) %s/v1/chat/completions
  fake provider       %s/ROUTE/v1   (routes: %s)
Files and logs: %s

Break a route, then heal it (docs/lab.md walks the tour):
  hermes lab fault free 30%% error_body%s
  hermes lab heal free%s
Ctrl-C stops every server.
`, policy, strconv.FormatFloat(l.rate, 'f', -1, 64), u.Hermes, u.Prometheus, u.Alertmanager, u.Pager, u.Gateway,
		u.Provider, strings.Join(labRoutes, ", "), l.dir, provider, provider)
}
