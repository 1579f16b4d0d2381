package proxy

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/gateway/instrument"
	"github.com/hermes-failover/hermes/gateway/validate"
)

// Proxy serves every route of its configuration under /NAME/, recording
// each reply with one instrument.Metrics. Apply swaps the routes while
// requests are being served: a request keeps the routes it started with.
type Proxy struct {
	metrics *instrument.Metrics
	logger  *slog.Logger
	routes  atomic.Pointer[routeSet]
	busy    *prometheus.CounterVec
	stalled *prometheus.CounterVec // callers that stopped sending their body
}

// New registers the gateway metric contract and the proxy's own series on
// reg and serves cfg's routes.
func New(cfg *Config, reg prometheus.Registerer, logger *slog.Logger) (*Proxy, error) {
	m, err := instrument.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
	m.SetLogger(logger)
	p := &Proxy{metrics: m, logger: logger,
		busy: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hermes_proxy_requests_refused_total",
			Help: "Requests answered 503 without calling the upstream, because the route had max_concurrent_requests calls open.",
		}, []string{"route"}),
		stalled: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "hermes_proxy_request_body_timeouts_total",
			Help: "Requests whose caller sent nothing of its request body for client_body_timeout: answered 408 (or cut, if the reply had begun), the upstream call cancelled, not recorded in llm_gateway_requests_total.",
		}, []string{"route"}),
	}
	for _, c := range []prometheus.Collector{p.busy, p.stalled} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("registering proxy metrics: %w", err)
		}
	}
	if err := p.Apply(cfg); err != nil {
		return nil, err
	}
	return p, nil
}

// Apply builds cfg's routes and, when every one builds, serves them in
// place of the current ones; requests already open finish on the old
// ones. On an error the current routes stay.
func (p *Proxy) Apply(cfg *Config) error {
	set := &routeSet{byName: make(map[string]*route, len(cfg.Routes))}
	var errs []error
	for _, rc := range cfg.Routes {
		r, err := p.newRoute(rc)
		if err != nil {
			errs = append(errs, fmt.Errorf("route %s: %w", rc.Name, err))
			continue
		}
		set.byName[rc.Name] = r
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	for name := range set.byName {
		p.metrics.InitRoute(name) // its judge's panics at 0 before its first call
	}
	if old := p.routes.Swap(set); old != nil {
		old.closeIdle()
	}
	return nil
}

// NoRoute answers a path that is no route's (and none of the proxy's
// own endpoints): 404, naming the route asked for.
func NoRoute(w http.ResponseWriter, r *http.Request) {
	name, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	http.Error(w, "hermes proxy: no route "+fmt.Sprintf("%q", name), http.StatusNotFound)
}

// routeSet is the routes of one configuration.
type routeSet struct {
	byName map[string]*route
}

func (s *routeSet) closeIdle() {
	for _, r := range s.byName {
		if r.idle != nil {
			r.idle.CloseIdleConnections()
		}
	}
}

// route is one upstream, served by the front (front.go): its request
// passed on through its lean exchange or its RoundTripper, its replies
// judged by v and recorded through instrument's recording core.
type route struct {
	name      string
	transport http.RoundTripper                   // the upstream's, held to the limits
	idle      interface{ CloseIdleConnections() } // of the upstream's clients, if any
	up        *url.URL
	v         *validate.Validator
	// judgedPaths are the path endings whose POSTs are judged.
	judgedPaths [][]byte
	// lean is the route's lean exchange, nil when its upstream needs
	// the RoundTripper (see front.go).
	lean  *lean
	slots chan struct{}
	// clientBodyTimeout is the longest the caller may pause sending its
	// request body.
	clientBodyTimeout time.Duration
}

func (p *Proxy) newRoute(rc Route) (*route, error) {
	up, err := url.Parse(rc.Upstream)
	if err != nil {
		return nil, errors.New("upstream: not a URL")
	}
	v, err := validate.New(rc.Validation)
	if err != nil {
		return nil, fmt.Errorf("validation: %w", err)
	}
	rt, h1, err := upstreamTransport(rc.HTTPConfig, "hermes_proxy_"+rc.Name)
	if err != nil {
		return nil, fmt.Errorf("http_config: %w", err)
	}
	paths := rc.JudgedPaths
	if paths == nil {
		paths = judgedPaths(rc.Validation.Format)
	}
	var judgedPaths [][]byte
	for _, s := range paths {
		judgedPaths = append(judgedPaths, []byte(s))
	}
	var ln *lean
	var idle interface{ CloseIdleConnections() }
	if c, ok := rt.(interface{ CloseIdleConnections() }); ok {
		idle = c
	}
	if h1 != nil {
		ln, idle = newLean(h1, up, rc.Limits), h1
	}
	return &route{
		lean:              ln,
		transport:         &limited{next: rt, limits: rc.Limits},
		idle:              idle,
		up:                up,
		v:                 v,
		judgedPaths:       judgedPaths,
		name:              rc.Name,
		slots:             make(chan struct{}, rc.MaxConcurrentRequests),
		clientBodyTimeout: rc.ClientBodyTimeout,
	}, nil
}

// redact is err without the URL an *url.Error carries: a URL may hold an
// API key in its query.
func redact(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}
