package fakeprovider

import (
	"encoding/json"
	"maps"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/hermes-failover/hermes/internal/faults"
)

// Model is the model the provider lists and serves.
const Model = "fake-model"

// FallbackText is what Fallback answers, and the message of the error
// templates.
const FallbackText = "系统繁忙，请稍后重试"

// ErrorInOKBody is the body ErrorInOK sends with HTTP 200: internal/faults'
// error template.
const ErrorInOKBody = faults.ErrorTemplate

// DefaultDelay is how long Slow and SlowFirstToken wait unless SetDelay
// changes it.
const DefaultDelay = 3 * time.Second

// Server is the provider's state and handler. Its zero value is not
// usable: make one with [New].
type Server struct {
	// APIKey, when set before requests arrive, is required as a bearer token.
	APIKey string

	mu       sync.Mutex
	faults   map[string]Fault   // by route; "" is every route without its own
	pickers  map[string]*picker // by route
	delay    time.Duration
	hold     chan struct{}
	requests map[string]int
	headers  []http.Header
	done     chan struct{}
	closed   bool
}

// New returns a provider with every route healthy.
func New() *Server {
	return &Server{
		faults: map[string]Fault{}, pickers: map[string]*picker{}, delay: DefaultDelay,
		requests: map[string]int{}, done: make(chan struct{}),
	}
}

// Handler serves the API of every route and the fault endpoints.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/models", s.models)
	mux.HandleFunc("POST /v1/chat/completions", s.chat)
	mux.HandleFunc("GET /{route}/v1/models", s.models)
	mux.HandleFunc("POST /{route}/v1/chat/completions", s.chat)
	mux.HandleFunc("GET /-/faults", s.getFaults)
	mux.HandleFunc("PUT /-/faults/{route}", s.putFault)
	mux.HandleFunc("DELETE /-/faults/{route}", s.deleteFault)
	mux.HandleFunc("GET /-/healthy", func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusOK) })
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if _, ok := s.begin(w, r, ""); ok {
			http.NotFound(w, r)
		}
	})
	return mux
}

// Close lets requests that wait for their client (NoResponse, Stall) and
// held streams end; call it before shutting the listener down.
func (s *Server) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed {
		s.closed = true
		close(s.done)
	}
	if s.hold != nil {
		close(s.hold)
		s.hold = nil
	}
}

// SetFault makes f hit route's requests from the next one on; route ""
// is every route without a fault of its own. A Healthy kind heals.
func (s *Server) SetFault(route string, f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.Kind == Healthy || f.Kind == "" {
		delete(s.faults, route)
		return
	}
	s.faults[route] = f
}

// Heal removes route's fault.
func (s *Server) Heal(route string) { s.SetFault(route, Fault{Kind: Healthy}) }

// Fault is the fault that hits route's requests (Kind Healthy if none).
func (s *Server) Fault(route string) Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.faultOf(route)
}

func (s *Server) faultOf(route string) Fault {
	if f, ok := s.faults[route]; ok {
		return f
	}
	if f, ok := s.faults[""]; ok {
		return f
	}
	return Fault{Kind: Healthy, Percent: 100}
}

// Faults are the faults set, by route.
func (s *Server) Faults() map[string]Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.faults)
}

// SetDelay sets how long Slow and SlowFirstToken wait (default DefaultDelay).
func (s *Server) SetDelay(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// Hold makes streamed answers stop after their first event until Release.
func (s *Server) Hold() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hold = make(chan struct{})
}

// Release lets held streams go on.
func (s *Server) Release() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.hold != nil {
		close(s.hold)
		s.hold = nil
	}
}

// Requests is how many requests reached path ("/v1/models",
// "/free/v1/chat/completions").
func (s *Server) Requests(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests[path]
}

// Headers are the headers of every request received, in order.
func (s *Server) Headers() []http.Header {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]http.Header(nil), s.headers...)
}

// begin counts the request, checks the key, and decides whether a fault
// hits it: it returns the kind to answer with, and false when the request
// has been answered already (refused key, a connection dropped, a 503).
// Only kinds that hit every path are drawn for paths other than
// completions, so a readiness probe does not eat a completion's share.
func (s *Server) begin(w http.ResponseWriter, r *http.Request, route string) (Kind, bool) {
	s.mu.Lock()
	s.requests[r.URL.Path]++
	s.headers = append(s.headers, r.Header.Clone())
	key := s.APIKey
	kind := Healthy
	if f := s.faultOf(route); f.Kind != Healthy && (f.Kind.everyPath() || strings.HasSuffix(r.URL.Path, "/chat/completions")) {
		p := s.pickers[route]
		if p == nil {
			p = &picker{}
			s.pickers[route] = p
		}
		if p.hit(f.Percent) {
			kind = f.Kind
		}
	}
	s.mu.Unlock()
	if key != "" && r.Header.Get("Authorization") != "Bearer "+key {
		writeJSON(w, http.StatusUnauthorized, apiError("invalid_request_error", "", "invalid api key"))
		return kind, false
	}
	switch kind {
	case Drop:
		if hj, ok := w.(http.Hijacker); ok {
			if conn, _, err := hj.Hijack(); err == nil {
				conn.Close()
			}
		}
		return kind, false
	case ServerError:
		writeJSON(w, http.StatusServiceUnavailable, apiError("server_error", "", "upstream overloaded"))
		return kind, false
	}
	return kind, true
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	kind, ok := s.begin(w, r, r.PathValue("route"))
	if !ok {
		return
	}
	data := []any{map[string]any{"id": "other-model", "object": "model", "owned_by": "fake"}}
	if kind != Unready {
		data = append(data, map[string]any{"id": Model, "object": "model", "owned_by": "fake"})
	}
	writeJSON(w, http.StatusOK, map[string]any{"object": "list", "data": data})
}

// wait blocks until the client has gone or the server is closing: the
// server never gives up first.
func (s *Server) wait(r *http.Request) {
	select {
	case <-r.Context().Done():
	case <-s.done:
	}
}

// sleep waits the delay; false when the client gave up first.
func (s *Server) sleep(r *http.Request) bool {
	s.mu.Lock()
	d := s.delay
	s.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-r.Context().Done():
		return false
	case <-s.done:
		return false
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func apiError(typ, code, msg string) map[string]any {
	e := map[string]any{"message": msg, "type": typ, "param": nil, "code": nil}
	if code != "" {
		e["code"] = code
	}
	return map[string]any{"error": e}
}
