package integration

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Service and Routes are the chain the test gateway serves.
const Service = "chat"

// Routes is the service's priority chain, primary first.
var Routes = []string{"free", "paid-standard", "paid-premium"}

// Mode is how one route of the test gateway behaves.
type Mode struct {
	Name     string
	SoftFail float64 // share of HTTP 200 replies whose content failed validation
	HardFail float64 // share of 502 answers
	Probe    float64 // llm_probe_success value (0 or 1)
	Latency  float64 // seconds
}

// The modes the tests drive routes through.
var (
	Healthy = Mode{Name: "healthy", SoftFail: 0.02, HardFail: 0.002, Probe: 1, Latency: 0.4}
	// Degraded is the silent failure of ../../docs/design.md: HTTP 200,
	// content broken.
	Degraded  = Mode{Name: "degraded", SoftFail: 0.60, HardFail: 0.002, Probe: 0, Latency: 1.8}
	Recovered = Mode{Name: "recovered", SoftFail: 0.01, HardFail: 0.001, Probe: 1, Latency: 0.4}
	// Sluggish scores about 82 with the test policy: warm, never shed, never normal.
	Sluggish = Mode{Name: "sluggish", SoftFail: 0.11, HardFail: 0.002, Probe: 1, Latency: 0.6}
)

// softReasons splits soft failures between reasons of the metric contract.
var softReasons = []struct {
	reason string
	share  float64
}{{"truncated", 0.5}, {"fallback_phrase", 0.3}, {"invalid_json", 0.2}}

// probes are the synthetic probes run against every route.
var probes = []string{"chat_basic", "json_schema"}

// Gateway is a test LLM gateway: it exposes the gateway metric contract on
// its own registry and, every Period, adds synthetic traffic to each route
// according to the route's Mode and the share the split file gives it, as
// a gateway that follows the file actuator would.
type Gateway struct {
	// Target is host:port of /metrics.
	Target string

	splitPath string
	srv       *httptest.Server
	requests  *prometheus.CounterVec
	duration  *prometheus.HistogramVec
	probe     *prometheus.GaugeVec
	quality   *prometheus.GaugeVec

	mu      sync.Mutex
	modes   map[string]Mode
	weights map[string]int
	extra   bool // a second quality series for "free"
	stop    chan struct{}
	done    chan struct{}
}

const (
	// Period is how often the gateway adds traffic.
	Period = 250 * time.Millisecond
	// requestsPerPeriod is the service's traffic per period.
	requestsPerPeriod = 20.0
)

// StartGateway starts the exporter on 127.0.0.1 with every route Healthy.
// splitPath is the file actuator's state file; until it exists all traffic
// goes to the primary route.
func StartGateway(t testing.TB, splitPath string) *Gateway {
	t.Helper()
	reg := prometheus.NewRegistry()
	g := &Gateway{
		splitPath: splitPath,
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llm_gateway_requests_total", Help: "Upstream calls.",
		}, []string{"route", "code", "verdict", "reason"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "llm_gateway_request_duration_seconds", Help: "Upstream latency.",
			Buckets: []float64{.1, .25, .5, 1, 2.5, 5, 10},
		}, []string{"route"}),
		probe: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "llm_probe_success", Help: "Synthetic probe result.",
		}, []string{"route", "probe"}),
		quality: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "llm_gateway_quality_score", Help: "Sampled quality relative to baseline.",
		}, []string{"route", "replica"}),
		modes:   map[string]Mode{},
		weights: map[string]int{Routes[0]: 100},
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	reg.MustRegister(g.requests, g.duration, g.probe, g.quality)
	for _, r := range Routes {
		g.modes[r] = Healthy
	}
	g.srv = httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	g.Target = strings.TrimPrefix(g.srv.URL, "http://")
	g.addTraffic()
	go g.loop()
	t.Cleanup(func() {
		close(g.stop)
		<-g.done
		g.srv.Close()
	})
	return g
}

// SetMode changes how route behaves from the next period on.
func (g *Gateway) SetMode(route string, m Mode) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.modes[route] = m
}

// SetDuplicateQuality makes route "free" expose a second
// llm_gateway_quality_score series (another replica label), or stops it.
func (g *Gateway) SetDuplicateQuality(on bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.extra = on
	if !on {
		g.quality.DeleteLabelValues(Routes[0], "b")
	}
}

func (g *Gateway) loop() {
	defer close(g.done)
	tk := time.NewTicker(Period)
	defer tk.Stop()
	for {
		select {
		case <-g.stop:
			return
		case <-tk.C:
			g.addTraffic()
		}
	}
}

// addTraffic adds one period of traffic. Counters grow by fractional
// amounts so that every ratio is exact and free of sampling noise.
func (g *Gateway) addTraffic() {
	if w, ok := readSplit(g.splitPath); ok {
		g.mu.Lock()
		g.weights = w
		g.mu.Unlock()
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, r := range Routes {
		m := g.modes[r]
		for _, p := range probes {
			g.probe.WithLabelValues(r, p).Set(m.Probe)
		}
		g.quality.WithLabelValues(r, "a").Set(0.95)
		n := requestsPerPeriod * float64(g.weights[r]) / 100
		if n <= 0 {
			continue
		}
		g.requests.WithLabelValues(r, "200", "ok", "").Add(n * (1 - m.SoftFail - m.HardFail))
		for _, s := range softReasons {
			g.requests.WithLabelValues(r, "200", "soft_fail", s.reason).Add(n * m.SoftFail * s.share)
		}
		g.requests.WithLabelValues(r, "502", "hard_fail", "").Add(n * m.HardFail)
		for range int(n + 0.5) {
			g.duration.WithLabelValues(r).Observe(m.Latency)
		}
	}
	if g.extra {
		g.quality.WithLabelValues(Routes[0], "b").Set(0.93)
	}
}

// readSplit reads the service's weights from the file actuator's state file.
func readSplit(path string) (map[string]int, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false
	}
	var doc struct {
		Services map[string]struct {
			Weights map[string]int `json:"weights"`
		} `json:"services"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		return nil, false
	}
	s, ok := doc.Services[Service]
	if !ok || len(s.Weights) == 0 {
		return nil, false
	}
	return s.Weights, true
}
