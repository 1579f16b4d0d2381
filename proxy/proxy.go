package proxy

import (
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httputil"
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
	buffers bufferPool             // shared by every route, across reloads
}

// New registers the gateway metric contract and the proxy's own series on
// reg and serves cfg's routes.
func New(cfg *Config, reg prometheus.Registerer, logger *slog.Logger) (*Proxy, error) {
	m, err := instrument.NewMetrics(reg)
	if err != nil {
		return nil, err
	}
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
	if old := p.routes.Swap(set); old != nil {
		old.closeIdle()
	}
	return nil
}

// ServeHTTP sends /NAME/REST to route NAME's upstream, REST appended to its
// URL.
func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	name, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	rt := p.routes.Load().byName[name]
	if rt == nil {
		http.Error(w, "hermes proxy: no route "+fmt.Sprintf("%q", name), http.StatusNotFound)
		return
	}
	select {
	case rt.slots <- struct{}{}:
	default:
		// Refused before any upstream call: not recorded, counted apart.
		p.busy.WithLabelValues(rt.name).Inc()
		http.Error(w, "hermes proxy: too many concurrent requests on route "+rt.name, http.StatusServiceUnavailable)
		return
	}
	defer func() { <-rt.slots }()
	r, stop := holdClientBody(w, r, rt.name, rt.clientBodyTimeout, p.stalled)
	defer stop()
	// The upstream may answer before the transport has read the last of
	// the request body (its EOF): without full duplex, net/http's server
	// would then consume and close that body as the reply's headers are
	// written, and the transport, failing to read it, would break the
	// upstream connection under the reply (seen as a stream cut after its
	// first event). HTTP/2 is full duplex already.
	_ = http.NewResponseController(w).EnableFullDuplex()
	rt.handler.ServeHTTP(w, r)
}

// routeSet is the routes of one configuration.
type routeSet struct {
	byName map[string]*route
}

func (s *routeSet) closeIdle() {
	for _, r := range s.byName {
		if c, ok := r.upstream.(interface{ CloseIdleConnections() }); ok {
			c.CloseIdleConnections()
		}
	}
}

// route is one upstream: instrument's Middleware around a reverse proxy.
type route struct {
	name      string
	handler   http.Handler
	transport http.RoundTripper // the upstream's, held to the limits
	upstream  http.RoundTripper // the upstream's, for closing idle connections
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
	rt, err := upstreamTransport(rc.HTTPConfig, "hermes_proxy_"+rc.Name)
	if err != nil {
		return nil, fmt.Errorf("http_config: %w", err)
	}
	prefix := "/" + rc.Name
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			// Rewrite drops the caller's X-Forwarded-* and Forwarded
			// headers; nginx passes them on untouched, and so does the
			// proxy, adding none of its own.
			for _, k := range forwardedHeaders {
				if v, ok := pr.In.Header[k]; ok {
					pr.Out.Header[k] = v
				}
			}
			pr.Out.URL.Path = strings.TrimPrefix(pr.In.URL.Path, prefix)
			if pr.In.URL.RawPath != "" {
				_, rest, _ := strings.Cut(strings.TrimPrefix(pr.In.URL.RawPath, "/"), "/")
				if rest != "" || strings.HasSuffix(pr.In.URL.RawPath, "/") {
					rest = "/" + rest
				}
				pr.Out.URL.RawPath = rest
			}
			// SetURL joins the paths, keeps the query and sets Host to the
			// upstream's, as nginx's proxy_pass does with
			// proxy_set_header Host $proxy_host.
			pr.SetURL(up)
			if pr.In.URL.Path == prefix {
				// /NAME is the upstream's base itself, as nginx maps it.
				pr.Out.URL.Path, pr.Out.URL.RawPath = up.Path, up.RawPath
			}
		},
		Transport: &limited{next: rt, limits: rc.Limits},
		// No FlushInterval: flushWriter flushes each write (and
		// ReverseProxy each write of a stream).
		BufferPool:   &p.buffers,
		ErrorLog:     slog.NewLogLogger(p.logger.Handler(), slog.LevelDebug),
		ErrorHandler: p.errorHandler(rc.Name),
	}
	judged := p.metrics.Middleware(rc.Name, v, rp)
	paths := rc.JudgedPaths
	if paths == nil {
		paths = DefaultJudgedPaths
	}
	var judgedPaths [][]byte
	for _, s := range paths {
		judgedPaths = append(judgedPaths, []byte(s))
	}
	var ln *lean
	if h1, ok := rt.(*h1Transport); ok {
		ln = newLean(h1, up, rc.Limits)
	}
	return &route{
		lean:        ln,
		transport:   &limited{next: rt, limits: rc.Limits},
		upstream:    rt,
		up:          up,
		v:           v,
		judgedPaths: judgedPaths,
		name:        rc.Name,
		handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w = &flushWriter{ResponseWriter: w}
			if r.Method == http.MethodPost && hasSuffix(r.URL.Path, paths) {
				judged.ServeHTTP(w, r)
				return
			}
			rp.ServeHTTP(w, r)
		}),
		slots:             make(chan struct{}, rc.MaxConcurrentRequests),
		clientBodyTimeout: rc.ClientBodyTimeout,
	}, nil
}

func hasSuffix(s string, suffixes []string) bool {
	for _, x := range suffixes {
		if strings.HasSuffix(s, x) {
			return true
		}
	}
	return false
}

var forwardedHeaders = []string{"Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto"}

// errorHandler answers an upstream call that got no reply as nginx does,
// 504 for a timeout and 502 otherwise, and nothing to a caller that hung
// up; instrument records it. A call cancelled because its caller stopped
// sending the request body is answered 408 and, its context cancelled,
// not recorded, as a caller that hung up is not: the upstream did
// nothing wrong.
func (p *Proxy) errorHandler(name string) func(http.ResponseWriter, *http.Request, error) {
	return func(w http.ResponseWriter, r *http.Request, err error) {
		code := instrument.UpstreamError(r, err)
		if clientBodyTimedOut(r) {
			p.logger.Debug("caller stopped sending the request body", "route", name)
			w.Header().Set("Connection", "close")
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusRequestTimeout)
			fmt.Fprintf(w, `{"error":{"message":"hermes proxy: the request body of route %s stopped arriving (client_body_timeout)","type":"invalid_request_error","code":"request_timeout"}}`+"\n", name)
			return
		}
		if code == "" {
			p.logger.Debug("caller hung up before the reply", "route", name)
			return
		}
		status := http.StatusBadGateway
		if code == instrument.CodeTimeout {
			status = http.StatusGatewayTimeout
		}
		p.logger.Warn("upstream call failed", "route", name, "code", code, "err", redact(err))
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"message":"hermes proxy: the upstream of route %s gave no reply (%s)","type":"upstream_error","code":%q}}`+"\n", name, code, code)
	}
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
