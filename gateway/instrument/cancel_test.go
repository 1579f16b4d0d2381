package instrument_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/hermes-failover/hermes/gateway/instrument"
	"github.com/hermes-failover/hermes/gateway/validate"
	"github.com/hermes-failover/hermes/internal/testenv"
)

// holdingUpstream answers a stream's first event when headers is true
// (nothing at all otherwise), then holds the reply until its caller goes
// away, and reports that on gone.
func holdingUpstream(t *testing.T, headers bool) (base string, arrived, gone chan struct{}) {
	arrived, gone = make(chan struct{}, 1), make(chan struct{}, 1)
	base = serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// A server notices its caller leave once it has read the request.
		io.Copy(io.Discard, r.Body)
		if headers {
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"Hello\"}}]}\n\n")
			http.NewResponseController(w).Flush()
		}
		arrived <- struct{}{}
		<-r.Context().Done()
		gone <- struct{}{}
	}))
	return base, arrived, gone
}

// TestMiddlewareCallerHangsUp: a caller that hangs up, before the reply
// begins or in the middle of a stream, cancels the upstream call and is
// not recorded, whether the proxy's error handler reports the error with
// UpstreamError or is httputil's default (which answers 502).
func TestMiddlewareCallerHangsUp(t *testing.T) {
	for _, tt := range []struct {
		name              string
		headers, withHook bool
	}{
		{"before the reply", false, true},
		{"before the reply, default error handler", false, false},
		{"mid-stream", true, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			up, arrived, gone := holdingUpstream(t, tt.headers)
			u, _ := url.Parse(up)
			proxy := httputil.NewSingleHostReverseProxy(u)
			proxy.FlushInterval = -1
			proxy.ErrorLog = nil
			if tt.withHook {
				proxy.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
					if instrument.UpstreamError(r, err) != "" {
						w.WriteHeader(http.StatusBadGateway)
					}
				}
			}
			reg := prometheus.NewRegistry()
			m := instrument.MustNewMetrics(reg)
			returned := make(chan struct{})
			h := m.Middleware("free", validate.MustNew(validate.Rules{}), proxy)
			base := serve(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				defer close(returned)
				h.ServeHTTP(w, r)
			}))

			ctx, cancel := context.WithCancel(context.Background())
			req := chatRequest(t, base, true).WithContext(ctx)
			done, read := make(chan error, 1), make(chan struct{})
			go func() {
				resp, err := http.DefaultClient.Do(req)
				if err == nil {
					line, _ := bufio.NewReader(resp.Body).ReadString('\n')
					if !strings.HasPrefix(line, "data: ") {
						err = fmt.Errorf("first line %q", line)
					}
					close(read)
					<-ctx.Done()
					resp.Body.Close()
				}
				done <- err
			}()
			<-arrived
			if tt.headers {
				<-read // the first event reached the client
			}
			cancel()
			if err := <-done; err != nil && !errors.Is(err, context.Canceled) {
				t.Fatal(err)
			}
			<-gone
			<-returned
			if mfs := recordedCalls(t, reg); len(mfs) != 0 {
				t.Fatalf("recorded %v", mfs)
			}
		})
	}
}

// TestMiddlewareUpstreamError: a call that got no reply is recorded as the
// Transport records it, with the code UpstreamError gives.
func TestMiddlewareUpstreamError(t *testing.T) {
	// A port nothing listens on: the listener is closed at once.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	l.Close()
	u, _ := url.Parse("http://" + l.Addr().String())
	proxy := httputil.NewSingleHostReverseProxy(u)
	var code string
	proxy.ErrorHandler = func(w http.ResponseWriter, r *http.Request, err error) {
		code = instrument.UpstreamError(r, err)
		w.WriteHeader(http.StatusBadGateway)
	}
	reg := prometheus.NewRegistry()
	m := instrument.MustNewMetrics(reg)
	base := serve(t, m.Middleware("free", validate.MustNew(validate.Rules{}), proxy))
	resp, err := http.DefaultClient.Do(chatRequest(t, base, false))
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if code != instrument.CodeConnError || resp.StatusCode != http.StatusBadGateway {
		t.Fatalf("code %q, status %d", code, resp.StatusCode)
	}
	waitMetric(t, reg, "llm_gateway_requests_total", map[string]string{"route": "free", "code": "conn_error", "verdict": "hard_fail", "reason": ""}, 1)
	if got := testenv.Metric(t, reg, "llm_gateway_response_size_bytes", map[string]string{"route": "free"}); got != -1 {
		t.Errorf("a call without a reply has a size: %v", got)
	}
}
