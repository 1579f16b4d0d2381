package unleash

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hermes-failover/hermes/actuators"
	"github.com/hermes-failover/hermes/actuators/actuatortest"
)

// fakeActuator points an actuator at handler, with a short timeout.
func fakeActuator(t *testing.T, token string, handler http.HandlerFunc) *Actuator {
	t.Helper()
	hs := httptest.NewServer(handler)
	t.Cleanup(hs.Close)
	return newActuator(t, map[string]any{"url": hs.URL, "admin_token": token, "timeout": "300ms"}, "chat")
}

func TestErrorsNeverHoldTheToken(t *testing.T) {
	const token = "*:*.0123456789abcdef"
	// A server that echoes the Authorization header in its error.
	a := fakeActuator(t, token, func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, `{"name":"BadDataError","message":"token %s is odd","details":[{"message":"really: %s"}]}`,
			r.Header.Get("Authorization"), r.Header.Get("Authorization"))
	})
	err := a.Apply(context.Background(), actuatortest.Normal())
	if err == nil || strings.Contains(err.Error(), token) || !strings.Contains(err.Error(), "400 Bad Request: token [REDACTED] is odd; really: [REDACTED]") {
		t.Errorf("Apply: %v", err)
	}
	if IsRetryable(err) {
		t.Errorf("a 400 is retryable: %v", err)
	}
}

func TestRetryable(t *testing.T) {
	ctx := context.Background()
	t.Run("5xx", func(t *testing.T) {
		a := fakeActuator(t, "*:*.test-token", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "<html>bad gateway</html>", http.StatusBadGateway)
		})
		err := a.Apply(ctx, actuatortest.Normal())
		var ue *Error
		if !IsRetryable(err) || !errors.As(err, &ue) || ue.StatusCode != 502 || !strings.Contains(err.Error(), "502 Bad Gateway: <html>bad gateway</html>") {
			t.Errorf("Apply on a 502: %v", err)
		}
	})
	t.Run("429", func(t *testing.T) {
		a := fakeActuator(t, "*:*.test-token", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"message":"slow down"}`)
		})
		if err := a.Apply(ctx, actuatortest.Normal()); !IsRetryable(err) {
			t.Errorf("Apply on a 429: %v, not retryable", err)
		}
	})
	t.Run("timeout", func(t *testing.T) {
		release := make(chan struct{})
		a := fakeActuator(t, "*:*.test-token", func(w http.ResponseWriter, r *http.Request) {
			select {
			case <-release:
			case <-r.Context().Done():
			}
		})
		defer close(release)
		start := time.Now()
		err := a.Apply(ctx, actuatortest.Normal())
		if !IsRetryable(err) || !strings.Contains(err.Error(), "no response within 300ms") {
			t.Errorf("Apply on a hanging server: %v", err)
		}
		// Both services are tried, each times out once.
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("Apply took %v", d)
		}
	})
	t.Run("refused", func(t *testing.T) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		addr := l.Addr().String()
		l.Close()
		a := newActuator(t, map[string]any{"url": "http://" + addr, "admin_token": "*:*.test-token"}, "chat")
		err = a.Apply(ctx, actuatortest.Normal())
		if !IsRetryable(err) || !strings.Contains(err.Error(), "connection refused") {
			t.Errorf("Apply on a closed port: %v", err)
		}
	})
	t.Run("canceled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		a := fakeActuator(t, "*:*.test-token", func(w http.ResponseWriter, r *http.Request) {
			cancel()
			<-r.Context().Done()
		})
		err := a.Apply(cctx, actuatortest.Normal())
		if err == nil || IsRetryable(err) || !errors.Is(err, context.Canceled) {
			t.Errorf("Apply canceled by the caller: %v (retryable %v), want context.Canceled, not retryable", err, IsRetryable(err))
		}
	})
	t.Run("interface", func(t *testing.T) {
		var err error = &Error{StatusCode: 503}
		if r, ok := err.(interface{ Retryable() bool }); !ok || !r.Retryable() {
			t.Error("a 503 *Error has no Retryable() true for retry wrappers")
		}
		if r, ok := err.(interface{ Temporary() bool }); !ok || !r.Temporary() {
			t.Error("a 503 *Error has no Temporary() true")
		}
	})
	t.Run("joined", func(t *testing.T) {
		err := errors.Join(errors.New("x"), fmt.Errorf("service chat: %w", &Error{Method: "GET", Path: "/", StatusCode: 503}))
		if !IsRetryable(err) {
			t.Error("a joined 503 is not retryable")
		}
		if IsRetryable(errors.Join(errors.New("x"), &Error{StatusCode: 404})) || IsRetryable(nil) {
			t.Error("a 404 is retryable")
		}
	})
}

func TestInvalidSplitSendsNothing(t *testing.T) {
	var requests atomic.Int64
	a := fakeActuator(t, "*:*.test-token", func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		http.NotFound(w, r)
	})
	err := a.Apply(context.Background(), actuators.Splits{"chat": {Weights: map[string]int{"free": 60, "paid": 30}}})
	if err == nil || !strings.Contains(err.Error(), "service chat: weights sum to 90, want 100") || IsRetryable(err) {
		t.Errorf("Apply of a bad split: %v", err)
	}
	if n := requests.Load(); n != 0 {
		t.Errorf("Apply of a bad split sent %d requests", n)
	}
}
