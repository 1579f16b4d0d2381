// Package fakeopenai starts the public fake provider (package
// fakeprovider) for a test: a real HTTP server on 127.0.0.1 that speaks
// the OpenAI chat-completions API (plain and streamed as server-sent
// events) and /v1/models, switched as a whole between healthy and the
// ways a cheap route fails: truncated, an error template inside HTTP 200,
// a fallback phrase, empty, too short, invalid JSON, slow, 5xx, a model
// that is not listed, a dropped connection, and strict parameter
// validation (422 on edge values).
package fakeopenai

import (
	"context"
	"net"
	"net/http"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/fakeprovider"
)

// Mode is how the server answers: a kind of the fake provider, for every
// request.
type Mode = fakeprovider.Kind

// The modes.
const (
	Healthy       = fakeprovider.Healthy
	Truncated     = fakeprovider.Truncated
	ErrorTemplate = fakeprovider.ErrorTemplate
	Fallback      = fakeprovider.Fallback
	Empty         = fakeprovider.Empty
	TooShort      = fakeprovider.TooShort
	InvalidJSON   = fakeprovider.InvalidJSON
	Slow          = fakeprovider.Slow
	ServerError   = fakeprovider.ServerError
	Unready       = fakeprovider.Unready
	Drop          = fakeprovider.Drop
	StrictParams  = fakeprovider.StrictParams
)

// Modes lists every mode.
var Modes = []Mode{Healthy, Truncated, ErrorTemplate, Fallback, Empty, TooShort, InvalidJSON, Slow, ServerError, Unready, Drop, StrictParams}

// Model is the model the server lists and serves.
const Model = fakeprovider.Model

// FallbackText is what Fallback mode answers.
const FallbackText = fakeprovider.FallbackText

// Server is a running fake API on 127.0.0.1. Its base URL for clients is
// URL + "/v1". The provider's methods (Hold, Release, SetDelay, Requests,
// Headers) and its APIKey field are the server's.
type Server struct {
	*fakeprovider.Server
	URL string
}

// Start starts a server in Healthy mode; it is closed when t ends.
func Start(t testing.TB) *Server {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Server: fakeprovider.New(), URL: "http://" + l.Addr().String()}
	srv := &http.Server{Handler: s.Handler(), ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(l) }()
	t.Cleanup(func() {
		s.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		_ = srv.Close()
	})
	return s
}

// SetMode switches how the server answers every request from the next
// one on.
func (s *Server) SetMode(m Mode) { s.SetFault("", fakeprovider.Fault{Kind: m, Percent: 100}) }

// Mode is the current mode.
func (s *Server) Mode() Mode { return s.Fault("").Kind }
