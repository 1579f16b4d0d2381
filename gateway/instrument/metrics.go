package instrument

import (
	"fmt"
	"log/slog"
	"runtime/debug"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/gateway/validate"
)

// ProbeHeader marks a synthetic probe request; the instrumentation does not
// record it.
const ProbeHeader = "X-Hermes-Probe"

// Codes besides HTTP statuses, for upstream calls that got no answer.
const (
	CodeTimeout   = "timeout"
	CodeConnError = "conn_error"
)

// DefaultDurationBuckets cover a short completion to a long stream.
var DefaultDurationBuckets = []float64{0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60, 120}

// DefaultSizeBuckets cover an empty reply to a few megabytes.
var DefaultSizeBuckets = prometheus.ExponentialBuckets(64, 4, 10)

// DefaultTTFTBuckets cover a first token at once to one after a minute.
var DefaultTTFTBuckets = []float64{0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60}

// Metrics holds the contract's series; one Metrics serves every route.
type Metrics struct {
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
	size     *prometheus.HistogramVec
	ttft     *prometheus.HistogramVec
	panics   *prometheus.CounterVec
	// panicLogged says a judging panic was logged: the first is, with
	// its stack, on logger (slog's default when nil); the rest are only
	// counted.
	panicLogged atomic.Bool
	logger      *slog.Logger

	// The series of each label set, curried once: WithLabelValues hashes
	// and checks every label value and takes the vector's lock on each
	// call, three or four calls a reply (1.8 % of hermes proxy's CPU
	// profile on plain replies under make bench-proxy). They hold the
	// children the vectors hold anyway.
	counters  sync.Map // requestLabels → prometheus.Counter
	durations sync.Map // route → prometheus.Observer, and so on
	sizes     sync.Map
	ttfts     sync.Map
	panicked  sync.Map // route → prometheus.Counter of panics

	now func() time.Time
}

type requestLabels struct{ route, code, verdict, reason string }

func (m *Metrics) counter(l requestLabels) prometheus.Counter {
	if c, ok := m.counters.Load(l); ok {
		return c.(prometheus.Counter)
	}
	c, _ := m.counters.LoadOrStore(l, m.requests.WithLabelValues(l.route, l.code, l.verdict, l.reason))
	return c.(prometheus.Counter)
}

// observer is route's child of v, kept in cache; a route's series appears
// on its first observation, as with WithLabelValues.
func observer(cache *sync.Map, v *prometheus.HistogramVec, route string) prometheus.Observer {
	if o, ok := cache.Load(route); ok {
		return o.(prometheus.Observer)
	}
	o, _ := cache.LoadOrStore(route, v.WithLabelValues(route))
	return o.(prometheus.Observer)
}

// InitRoute makes route's series of judge panics, at 0, so that its
// first panic is an increase a rule sees: a counter born at 1 is seen
// only as new, which a gap in the scrapes looks like too. Begin calls
// it, and Middleware and Transport for their route; a front that knows
// its routes before their first call (hermes proxy, on each load of its
// configuration) calls it for each, so that a panic on a route's first
// call, before any scrape, is seen too.
func (m *Metrics) InitRoute(route string) {
	m.panicCounter(route)
}

func (m *Metrics) panicCounter(route string) prometheus.Counter {
	if c, ok := m.panicked.Load(route); ok {
		return c.(prometheus.Counter)
	}
	c, _ := m.panicked.LoadOrStore(route, m.panics.WithLabelValues(route))
	return c.(prometheus.Counter)
}

// NewMetrics registers the contract's series on reg.
func NewMetrics(reg prometheus.Registerer) (*Metrics, error) {
	m := &Metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llm_gateway_requests_total",
			Help: "Upstream LLM calls by route, HTTP code (or timeout, conn_error), verdict and soft-failure reason.",
		}, []string{"route", "code", "verdict", "reason"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "llm_gateway_request_duration_seconds",
			Help:    "Upstream latency, from sending the request to the end of the reply body.",
			Buckets: DefaultDurationBuckets,
		}, []string{"route"}),
		size: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "llm_gateway_response_size_bytes",
			Help:    "Size of each upstream reply body.",
			Buckets: DefaultSizeBuckets,
		}, []string{"route"}),
		ttft: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "llm_gateway_time_to_first_token_seconds",
			Help:    "Time from sending the request to the first token (content, a tool call, a refusal or thinking) of a streamed upstream reply.",
			Buckets: DefaultTTFTBuckets,
		}, []string{"route"}),
		panics: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "llm_gateway_judge_panics_total",
			Help: "Replies whose judging panicked (a bug in Hermes, logged once with its stack): passed on unchanged, not recorded as requests. A route's series is at 0 from its first call, or from the start where the front knows its routes.",
		}, []string{"route"}),
		now: time.Now,
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.size, m.ttft, m.panics} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering gateway metrics: %w", err)
		}
	}
	return m, nil
}

// MustNewMetrics is NewMetrics that panics on a registration error.
func MustNewMetrics(reg prometheus.Registerer) *Metrics {
	m, err := NewMetrics(reg)
	if err != nil {
		panic(err)
	}
	return m
}

// Observe records one upstream call: its code (the HTTP status as text,
// CodeTimeout or CodeConnError), its judgement, how long it took and the
// size of its body. The transport and middleware call it; a gateway that
// judges replies itself may too.
func (m *Metrics) Observe(route, code string, res validate.Result, took time.Duration, bytes int64) {
	verdict, reason := res.Verdict, res.Reason
	if verdict == "" {
		verdict = validate.HardFail
	}
	m.counter(requestLabels{route, code, string(verdict), string(reason)}).Inc()
	observer(&m.durations, m.duration, route).Observe(took.Seconds())
	if code != CodeTimeout && code != CodeConnError {
		observer(&m.sizes, m.size, route).Observe(float64(bytes))
	}
}

// SetLogger sets where the first panic of the judge is logged (slog's
// default logger otherwise). Call it before the Metrics records.
func (m *Metrics) SetLogger(l *slog.Logger) { m.logger = l }

// judgePanicked counts a panic v of the judge on a reply of route, and
// logs the first one with its stack.
func (m *Metrics) judgePanicked(route string, v any) {
	m.panicCounter(route).Inc()
	if m.panicLogged.CompareAndSwap(false, true) {
		logger := m.logger
		if logger == nil {
			logger = slog.Default()
		}
		logger.Error("judging a reply panicked: the reply passed unchanged and is not recorded; later panics are only counted in llm_gateway_judge_panics_total",
			"route", route, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
	}
}

// ObserveTimeToFirstToken records how long a streamed reply of route took
// to deliver its first token. The transport and middleware call it for
// every stream that delivered one.
func (m *Metrics) ObserveTimeToFirstToken(route string, took time.Duration) {
	observer(&m.ttfts, m.ttft, route).Observe(took.Seconds())
}

// firstToken notes when a reply's first token arrived; the zero value has
// seen none. The transport's body and the middleware's recorder embed it.
type firstToken struct {
	at   time.Time
	seen bool
}

// check notes the time of the first token once c has seen it.
func (f *firstToken) check(c *validate.Classifier, now func() time.Time) {
	if !f.seen && c.FirstToken() {
		f.at, f.seen = now(), true
	}
}

// observe records the time to first token of a stream that had one.
func (f *firstToken) observe(m *Metrics, route string, res validate.Result, start time.Time) {
	if f.seen && res.Stream {
		m.ObserveTimeToFirstToken(route, f.at.Sub(start))
	}
}

// statusCode is status as its code label: from a table for the codes
// HTTP defines (100–599), which strconv.Itoa would allocate for each
// reply.
func statusCode(status int) string {
	if status >= 100 && status < len(codeLabels) {
		return codeLabels[status]
	}
	return strconv.Itoa(status)
}

var codeLabels = func() (t [600]string) {
	for i := 100; i < len(t); i++ {
		t[i] = strconv.Itoa(i)
	}
	return t
}()

// incomplete says whether a reason can come from a body the caller stopped
// reading early rather than from the upstream.
func incomplete(r validate.Reason) bool {
	switch r {
	case validate.ReasonTruncated, validate.ReasonInvalidJSON, validate.ReasonEmpty:
		return true
	}
	return false
}
